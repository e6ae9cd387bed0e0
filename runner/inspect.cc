#include "verbs.h"
#include "errors.h"
namespace graphrun {
int inspect_verb(const Options&) { throw UsageError("inspect: not yet"); }
}  // namespace graphrun
