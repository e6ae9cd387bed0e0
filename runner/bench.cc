#include "verbs.h"
#include "errors.h"
namespace graphrun {
int bench_verb(const Options&) { throw UsageError("bench: not yet"); }
}  // namespace graphrun
