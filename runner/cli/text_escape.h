// Text from a model file (node names, op types, function names) written to a
// terminal: its control characters as \xNN, so a name holding ESC [2J cannot
// clear the screen. graphrun does the same (graphdef/graphrun/cli.py).
#pragma once

#include <string>

namespace graphrun {

// Every C0 control character, DEL, C1 control (UTF-8 C2 80..C2 9F) and byte
// that is not UTF-8 written as \xNN. With `keep_lines`, newlines stay (a
// report of many lines) and tabs and carriage returns are escaped too;
// without, newlines, tabs and carriage returns become spaces (one error line).
std::string escape_controls(const std::string& text, bool keep_lines);

}  // namespace graphrun
