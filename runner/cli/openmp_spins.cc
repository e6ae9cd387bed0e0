// graphrun-cc's start: OpenMP threads that spin briefly at each barrier.
#include <cstdlib>
#include <cstring>

#include <unistd.h>

namespace graphrun {
namespace {

// oneDNN (the build runner/third_party/onednn.txt names) runs its threads
// with OpenMP (libgomp), and so do our own kernels (core/parallel.h): one
// pool. How its threads wait between parallel
// regions decides much of a small model's time. Waking a sleeping thread
// costs time once per region, and a CNN has dozens of regions a run, so
// passive waits are slow on an idle machine. Spinning for long hurts when
// the cores are busy with other work, since a spinning thread takes the core
// the thread it waits for needs (libgomp's default spin is 300,000 turns).
// A short spin catches the next region of the same run and sleeps soon
// after the run ends, close to the best of both whether the machine is idle
// or loaded (docs/performance.md has the figures). So GOMP_SPINCOUNT=1000 is
// the default. libgomp reads its settings once, in its initializer, from the
// environment. Setting the variable from this process is too late for that:
// glibc's own initializer, which runs after the executable's .preinit_array
// and before libgomp's, resets `environ` to the one the process started
// with, dropping anything setenv added. So when neither OMP_WAIT_POLICY nor
// GOMP_SPINCOUNT is given, the executable starts itself again, before any
// library is initialized, with GOMP_SPINCOUNT=1000 added (a run under a tool
// that should follow the process, valgrind say, sets one of them itself). A
// setting the user made is kept. Only an executable may have a
// .preinit_array, so this lives in the CLI; a process loading
// libgraphrun.so sets the variable itself (runner/capi/graphrun_c.h).
bool names_variable(const char* entry, const char* name) {
  const std::size_t length = std::strlen(name);
  return std::strncmp(entry, name, length) == 0 && entry[length] == '=';
}

void prefer_short_openmp_spins(int, char** argv, char** envp) {
  if (argv == nullptr || argv[0] == nullptr || envp == nullptr) return;
  std::size_t count = 0;
  for (; envp[count] != nullptr; ++count) {
    if (names_variable(envp[count], "OMP_WAIT_POLICY") || names_variable(envp[count], "GOMP_SPINCOUNT")) return;
  }
  static char short_spin[] = "GOMP_SPINCOUNT=1000";
  char** environment = static_cast<char**>(std::malloc((count + 2) * sizeof(char*)));
  if (environment == nullptr) return;
  std::memcpy(environment, envp, count * sizeof(char*));
  environment[count] = short_spin;
  environment[count + 1] = nullptr;
  execve("/proc/self/exe", argv, environment);
  std::free(environment);  // not restarted (no /proc): libgomp's default waits then
}

__attribute__((section(".preinit_array"), used)) void (*const short_openmp_spins)(int, char**,
                                                                                  char**) = prefer_short_openmp_spins;

}  // namespace
}  // namespace graphrun
