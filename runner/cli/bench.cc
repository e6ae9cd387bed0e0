// graphrun-cc bench: graphrun bench's measurements of the C++ runner, in
// graphrun's text layout and JSON keys. One plan runs the same fetches with
// the same feeds over and over: a first run (which also plans), --warmup
// untimed runs, then --runs N timed runs or as many as fit in --duration S
// (by default up to 1000 runs or 5 s). Percentiles are nearest-rank.
// --profile repeats the timed runs with a timer around every kernel; Consts
// and fed placeholders are left out, and a variable's reads count as its own;
// a line (a key in JSON) says what the load-time graph passes changed.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/float_repr.h"
#include "io/format.h"
#include "cli/prepare.h"
#include "io/stdout.h"
#include "cli/verbs.h"

namespace graphrun {

namespace {

constexpr int64_t kDefaultRuns = 1000;
constexpr double kDefaultSeconds = 5.0;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct Timed {
  std::string name, op;
  int nodes = 0;
  double seconds = 0;  // mean per run
};

struct Report {
  std::string model, feeds;
  double load = 0, first = 0;
  int64_t warmup = 0;
  std::vector<double> latencies;  // sorted
  double runs_per_second = 0;
  bool profiled = false;
  int64_t profile_runs = 0;
  double profile_total = 0;
  std::vector<Timed> op_types, slowest;
  PassReport passes;  // shown with the profile: what ran is the optimized graph
};

double percentile(const std::vector<double>& ordered, double p) {
  const int64_t n = static_cast<int64_t>(ordered.size());
  const int64_t rank = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(p / 100 * n)));
  return ordered[rank - 1];
}

double mean(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return sum / values.size();
}

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string ms(double seconds) { return fixed(seconds * 1000, 3); }

// Python's json.dumps of a float.
std::string json_number(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  return float_repr(value);
}

std::vector<std::string> columns(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::vector<std::string> lines;
  for (const auto& row : rows) {
    std::string line = "  ";
    for (std::size_t i = 0; i < row.size(); ++i)
      line += (i ? "  " : "") + row[i] + std::string(widths[i] - row[i].size(), ' ');
    while (!line.empty() && line.back() == ' ') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

double share(double seconds, double total) { return total > 0 ? seconds / total : 0.0; }

std::string to_text(const Report& r) {
  const auto& lat = r.latencies;
  const int64_t runs = static_cast<int64_t>(lat.size());
  const double total = r.runs_per_second ? runs / r.runs_per_second : 0.0;
  std::vector<std::string> lines = {
      "bench " + r.model,
      "feeds: " + r.feeds,
      "load " + ms(r.load) + " ms, first run " + ms(r.first) + " ms, " + std::to_string(r.warmup) + " warm-up runs, " +
          std::to_string(runs) + " timed runs in " + fixed(total, 3) + " s",
      "latency ms: min " + ms(lat.front()) + "  p50 " + ms(percentile(lat, 50)) + "  p90 " + ms(percentile(lat, 90)) +
          "  p99 " + ms(percentile(lat, 99)) + "  mean " + ms(mean(lat)) + "  max " + ms(lat.back()),
      "throughput: " + fixed(r.runs_per_second, 1) + " runs/s",
  };
  if (r.profiled) {
    lines.push_back("profile: " + std::to_string(r.profile_runs) + " runs with a timer around every node, " +
                    ms(r.profile_total) + " ms per run in nodes");
    lines.push_back(r.passes.summary());
    lines.push_back("time per op type:");
    std::vector<std::vector<std::string>> rows = {{"op type", "nodes", "ms/run", "share"}};
    for (const Timed& t : r.op_types) {
      rows.push_back(
          {t.op, std::to_string(t.nodes), ms(t.seconds), fixed(share(t.seconds, r.profile_total) * 100, 1) + "%"});
    }
    for (const std::string& line : columns(rows)) lines.push_back(line);
    lines.push_back("slowest nodes (top " + std::to_string(r.slowest.size()) + "):");
    rows = {{"node", "op type", "ms/run", "share"}};
    for (const Timed& t : r.slowest) {
      rows.push_back({t.name, t.op, ms(t.seconds), fixed(share(t.seconds, r.profile_total) * 100, 1) + "%"});
    }
    for (const std::string& line : columns(rows)) lines.push_back(line);
  }
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

std::string to_json(const Report& r) {
  const auto& lat = r.latencies;
  std::string out = "{\"model\": ";
  append_json_string(out, r.model);
  out += ", \"feeds\": ";
  append_json_string(out, r.feeds);
  out += ", \"load_seconds\": " + json_number(r.load) + ", \"first_run_seconds\": " + json_number(r.first) +
         ", \"warmup_runs\": " + std::to_string(r.warmup) + ", \"runs\": " + std::to_string(lat.size()) +
         ", \"latency_seconds\": {\"min\": " + json_number(lat.front()) +
         ", \"p50\": " + json_number(percentile(lat, 50)) + ", \"p90\": " + json_number(percentile(lat, 90)) +
         ", \"p99\": " + json_number(percentile(lat, 99)) + ", \"mean\": " + json_number(mean(lat)) +
         ", \"max\": " + json_number(lat.back()) + "}, \"runs_per_second\": " + json_number(r.runs_per_second);
  if (r.profiled) {
    out += ", \"profile\": {\"runs\": " + std::to_string(r.profile_runs) +
           ", \"seconds_per_run\": " + json_number(r.profile_total) + ", \"op_types\": [";
    for (std::size_t i = 0; i < r.op_types.size(); ++i) {
      const Timed& t = r.op_types[i];
      out += std::string(i ? ", " : "") + "{\"op\": ";
      append_json_string(out, t.op);
      out += ", \"nodes\": " + std::to_string(t.nodes) + ", \"seconds\": " + json_number(t.seconds) +
             ", \"share\": " + json_number(share(t.seconds, r.profile_total)) + "}";
    }
    out += "], \"slowest_nodes\": [";
    for (std::size_t i = 0; i < r.slowest.size(); ++i) {
      const Timed& t = r.slowest[i];
      out += std::string(i ? ", " : "") + "{\"node\": ";
      append_json_string(out, t.name);
      out += ", \"op\": ";
      append_json_string(out, t.op);
      out += ", \"seconds\": " + json_number(t.seconds) +
             ", \"share\": " + json_number(share(t.seconds, r.profile_total)) + "}";
    }
    out += "]}, \"optimize\": " + r.passes.json();
  }
  return out + "}\n";
}

// The timed runs: --runs N, or as many as fit in --duration S, or the defaults.
template <class Run>
std::vector<double> measure(const Options& options, Run run) {
  const int64_t limit_runs = options.bench_runs ? options.bench_runs : options.duration > 0 ? 0 : kDefaultRuns;
  const double limit_seconds = options.bench_runs ? 0 : options.duration > 0 ? options.duration : kDefaultSeconds;
  std::vector<double> latencies;
  const auto start = Clock::now();
  while (true) {
    const auto before = Clock::now();
    run();
    const auto after = Clock::now();
    latencies.push_back(std::chrono::duration<double>(after - before).count());
    if (limit_runs > 0 && static_cast<int64_t>(latencies.size()) >= limit_runs) break;
    if (limit_seconds > 0 && std::chrono::duration<double>(after - start).count() >= limit_seconds) break;
  }
  return latencies;
}

void profile(const Graph& graph, Executor& executor, const FeedMap& feeds, VariableStore& variables, int64_t runs,
             int64_t top, Report& report) {
  std::vector<double> seconds(graph.size(), 0.0);
  executor.time_nodes(&seconds);
  for (int64_t i = 0; i < runs; ++i) executor.run(feeds, variables);
  executor.time_nodes(nullptr);
  std::vector<Timed> nodes;
  for (int i : executor.order()) {
    const GraphNode& node = graph.node(i);
    if (node.op() == "Const" || feeds.count(i)) continue;
    nodes.push_back({node.name(), node.op(), 1, seconds[i] / runs});
  }
  std::map<std::string, Timed> types;
  for (const Timed& t : nodes) {
    Timed& type = types[t.op];
    type.op = t.op;
    ++type.nodes;
    type.seconds += t.seconds;
    report.profile_total += t.seconds;
  }
  for (const auto& entry : types) report.op_types.push_back(entry.second);
  std::stable_sort(report.op_types.begin(), report.op_types.end(),
                   [](const Timed& a, const Timed& b) { return a.seconds > b.seconds; });
  std::stable_sort(nodes.begin(), nodes.end(), [](const Timed& a, const Timed& b) { return a.seconds > b.seconds; });
  if (static_cast<int64_t>(nodes.size()) > top) nodes.resize(top);
  report.slowest = nodes;
  report.profiled = true;
  report.profile_runs = runs;
}

}  // namespace

int bench_verb(const Options& options) {
  Report report;
  const auto started = Clock::now();
  const Prepared prepared = prepare(options);
  report.load = seconds_since(started);
  report.model = options.model;
  report.feeds = describe_feeds(prepared, options);
  report.passes = prepared.passes;
  report.warmup = options.warmup;
  std::vector<Endpoint> fetches;
  for (const Fetch& fetch : prepared.fetches) fetches.push_back(fetch.endpoint);
  const Graph& graph = *prepared.graph;
  VariableStore variables;

  const auto first = Clock::now();
  Executor executor(graph, fetches, {}, prepared.feeds);
  executor.run(prepared.feeds, variables);
  report.first = seconds_since(first);
  for (int64_t i = 0; i < options.warmup; ++i) executor.run(prepared.feeds, variables);
  report.latencies = measure(options, [&] { executor.run(prepared.feeds, variables); });
  const int64_t runs = static_cast<int64_t>(report.latencies.size());
  double sum = 0;
  for (double latency : report.latencies) sum += latency;
  report.runs_per_second = sum > 0 ? runs / sum : INFINITY;
  if (options.profile) profile(graph, executor, prepared.feeds, variables, runs, options.top, report);
  std::sort(report.latencies.begin(), report.latencies.end());
  write_stdout(options.json ? to_json(report) : to_text(report));
  return kExitOk;
}

}  // namespace graphrun
