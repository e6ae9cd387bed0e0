#include "core/tensor_limit.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "core/errors.h"
#include "core/int_text.h"

namespace graphrun {

namespace {

constexpr const char* kVariable = "GRAPHDEF_MAX_TENSOR_BYTES";
// For tests: a directory read in place of / for the cgroup files.
constexpr const char* kRootVariable = "GRAPHDEF_CGROUP_ROOT";

uint64_t physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  uint64_t bytes = 0;
  // Unknown (sysconf failed): no limit beyond what the address space allows.
  if (pages <= 0 || page_size <= 0 ||
      __builtin_mul_overflow(static_cast<uint64_t>(pages), static_cast<uint64_t>(page_size), &bytes)) {
    return UINT64_MAX;
  }
  return bytes;
}

// cgroup v1 writes "no limit" as the largest page-aligned int64.
constexpr uint64_t kV1Unlimited = uint64_t{1} << 62;

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, sep)) parts.push_back(part);
  return parts;
}

std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> fields;
  std::istringstream in(line);
  std::string field;
  while (in >> field) fields.push_back(field);
  return fields;
}

std::string join_path(const std::string& base, const std::string& rest) {
  std::string tail = rest;
  while (!tail.empty() && tail.front() == '/') tail.erase(0, 1);
  if (tail.empty()) return base;
  return base.empty() || base.back() == '/' ? base + tail : base + "/" + tail;
}

struct Mount {
  std::string point;  // where it is mounted
  std::string root;   // the cgroup path its top shows
};

// The cgroup2 mount and the v1 memory controller's mount, from mountinfo.
void cgroup_mounts(const std::string& root, std::optional<Mount>& v2, std::optional<Mount>& v1) {
  const auto text = read_text(join_path(root, "proc/self/mountinfo"));
  if (!text) return;
  for (const std::string& line : split(*text, '\n')) {
    const auto fields = fields_of(line);
    std::size_t dash = 6;
    while (dash < fields.size() && fields[dash] != "-") ++dash;
    if (dash + 3 >= fields.size()) continue;
    std::string point = fields[4];
    for (std::size_t at; (at = point.find("\\040")) != std::string::npos;) point.replace(at, 4, " ");
    const Mount mount{point, fields[3]};
    const auto options = split(fields[dash + 3], ',');
    if (fields[dash + 1] == "cgroup2" && !v2) {
      v2 = mount;
    } else if (fields[dash + 1] == "cgroup" && !v1 &&
               std::find(options.begin(), options.end(), "memory") != options.end()) {
      v1 = mount;
    }
  }
}

// The directories of cgroup `path` and each ancestor under `mount`.
std::vector<std::string> cgroup_dirs(const std::string& root, const Mount& mount, std::string path) {
  const std::string& top = mount.root;
  std::string prefix = top;
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  if (top != "/" && (path == top || path.rfind(prefix + "/", 0) == 0)) path = path.substr(top.size());
  std::vector<std::string> parts;
  for (const std::string& part : split(path, '/')) {
    if (!part.empty() && part != "." && part != "..") parts.push_back(part);
  }
  std::vector<std::string> dirs;
  std::string dir = join_path(root, mount.point);
  dirs.push_back(dir);
  for (const std::string& part : parts) {
    dir = join_path(dir, part);
    dirs.push_back(dir);
  }
  return dirs;
}

std::optional<uint64_t> smallest_limit(const std::vector<std::string>& dirs, const char* name, uint64_t unlimited) {
  std::optional<uint64_t> found;
  for (const std::string& dir : dirs) {
    const auto text = read_text(join_path(dir, name));
    if (!text) continue;
    std::string value = *text;
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) value.pop_back();
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.front()))) value.erase(0, 1);
    if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos) continue;  // "max"
    uint64_t bytes = 0;
    bool overflow = false;
    for (char c : value) {
      overflow = overflow || __builtin_mul_overflow(bytes, uint64_t{10}, &bytes) ||
                 __builtin_add_overflow(bytes, static_cast<uint64_t>(c - '0'), &bytes);
    }
    if (overflow || bytes >= unlimited) continue;
    found = found ? std::min(*found, bytes) : bytes;
  }
  return found;
}

std::optional<uint64_t> rlimit_memory() {
  std::optional<uint64_t> found;
  for (int which : {RLIMIT_AS, RLIMIT_DATA}) {
    struct rlimit limit{};
    if (getrlimit(which, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) continue;
    const uint64_t bytes = static_cast<uint64_t>(limit.rlim_cur);
    found = found ? std::min(*found, bytes) : bytes;
  }
  return found;
}

uint64_t read_limit() {
  const char* text = std::getenv(kVariable);
  if (text == nullptr || *text == '\0') {
    const char* root = std::getenv(kRootVariable);
    return default_max_tensor_bytes(root != nullptr && *root != '\0' ? root : "/");
  }
  IntText value;
  if (!parse_int_text(text, value) || value.negative || value.magnitude == 0) {
    throw UsageError(std::string(kVariable) + " must be a whole number of bytes of at least 1, got '" + text + "'");
  }
  return value.magnitude;
}

}  // namespace

namespace {

// One memory cgroup hierarchy this process is in: its directories, the
// files of its limit and usage, and the limit value that means none.
struct MemoryCgroup {
  std::vector<std::string> dirs;
  const char* limit_file;
  const char* usage_file;
  uint64_t unlimited;
};

std::vector<MemoryCgroup> memory_cgroups(const std::string& root) {
  std::optional<Mount> v2, v1;
  cgroup_mounts(root, v2, v1);
  std::vector<MemoryCgroup> found;
  const auto text = read_text(join_path(root, "proc/self/cgroup"));
  if (!text) return found;
  for (const std::string& line : split(*text, '\n')) {
    const std::size_t first = line.find(':');
    const std::size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string hierarchy = line.substr(0, first);
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    const auto names = split(controllers, ',');
    if (hierarchy == "0" && controllers.empty() && v2) {
      found.push_back({cgroup_dirs(root, *v2, path), "memory.max", "memory.current", UINT64_MAX});
    } else if (std::find(names.begin(), names.end(), "memory") != names.end() && v1) {
      found.push_back({cgroup_dirs(root, *v1, path), "memory.limit_in_bytes", "memory.usage_in_bytes", kV1Unlimited});
    }
  }
  return found;
}

// "MemAvailable:  123 kB" -> 123 * 1024.
std::optional<uint64_t> kib_field(const std::string& text, const std::string& name) {
  for (const std::string& line : split(text, '\n')) {
    if (line.compare(0, name.size(), name) != 0 || line.size() <= name.size() || line[name.size()] != ':') continue;
    const auto fields = fields_of(line.substr(name.size() + 1));
    if (fields.empty() || fields[0].find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    uint64_t kib = 0;
    for (char c : fields[0]) {
      if (__builtin_mul_overflow(kib, uint64_t{10}, &kib) ||
          __builtin_add_overflow(kib, static_cast<uint64_t>(c - '0'), &kib)) {
        return std::nullopt;
      }
    }
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(kib, uint64_t{1024}, &bytes)) return std::nullopt;
    return bytes;
  }
  return std::nullopt;
}

void keep_least(std::optional<uint64_t>& found, uint64_t value) { found = found ? std::min(*found, value) : value; }

}  // namespace

std::optional<uint64_t> cgroup_memory_limit(const std::string& root) {
  std::optional<uint64_t> found;
  for (const MemoryCgroup& group : memory_cgroups(root)) {
    if (const auto limit = smallest_limit(group.dirs, group.limit_file, group.unlimited)) keep_least(found, *limit);
  }
  return found;
}

std::optional<uint64_t> free_memory_now(const std::string& root) {
  std::optional<uint64_t> found;
  if (const auto meminfo = read_text(join_path(root, "proc/meminfo"))) {
    if (const auto available = kib_field(*meminfo, "MemAvailable")) keep_least(found, *available);
  }
  for (const MemoryCgroup& group : memory_cgroups(root)) {
    for (const std::string& dir : group.dirs) {
      const auto limit = smallest_limit({dir}, group.limit_file, group.unlimited);
      const auto usage = smallest_limit({dir}, group.usage_file, UINT64_MAX);
      if (limit && usage) keep_least(found, *limit > *usage ? *limit - *usage : 0);
    }
  }
  const std::string status = read_text(join_path(root, "proc/self/status")).value_or("");
  const std::pair<int, const char*> rlimits[] = {{RLIMIT_AS, "VmSize"}, {RLIMIT_DATA, "VmData"}};
  for (const auto& [which, field] : rlimits) {
    struct rlimit limit{};
    const auto used = kib_field(status, field);
    if (getrlimit(which, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY || !used) continue;
    const uint64_t soft = static_cast<uint64_t>(limit.rlim_cur);
    keep_least(found, soft > *used ? soft - *used : 0);
  }
  return found;
}

void check_free_memory(uint64_t bytes, uint64_t reclaimable, const std::string& described) {
  const char* root = std::getenv(kRootVariable);
  const auto free = free_memory_now(root != nullptr && *root != '\0' ? root : "/");
  if (!free) return;
  uint64_t available = 0;
  if (__builtin_add_overflow(*free, reclaimable, &available) || bytes <= available) return;
  throw TensorLimitError(described + " would take " + format_bytes(bytes) + ", more than the " +
                         format_bytes(available) + " of memory free now (free memory, or ask for less)");
}

uint64_t default_max_tensor_bytes(const std::string& root) {
  uint64_t limit = physical_memory();
  if (const auto cgroup = cgroup_memory_limit(root)) limit = std::min(limit, *cgroup);
  if (const auto rlimit = rlimit_memory()) limit = std::min(limit, *rlimit);
  return std::max<uint64_t>(limit, 1);
}

uint64_t max_tensor_bytes() {
  // A function-local static: read on first use, and read again if the first
  // read threw (so every use reports a bad value the same way).
  static const uint64_t limit = read_limit();
  return limit;
}

std::string out_of_memory_text() {
  std::string limit;
  try {
    limit = ", under the limit of " + format_bytes(max_tensor_bytes()) + " per tensor";
  } catch (const std::exception&) {
  }
  return "out of memory" + limit + " (free memory, or set " + kVariable + " lower)";
}

std::string format_bytes(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";  // graphrun's unit (graphdef/framework/limits.py)
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, kUnits[unit]);
  return text;
}

}  // namespace graphrun
