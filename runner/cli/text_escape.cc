#include "cli/text_escape.h"

namespace graphrun {

std::string escape_controls(const std::string& text, bool keep_lines) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  auto hex = [&](unsigned char c) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 15];
  };
  const std::size_t n = text.size();
  for (std::size_t i = 0; i < n;) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n' && keep_lines) {
      out += '\n';
      ++i;
    } else if ((c == '\n' || c == '\r' || c == '\t') && !keep_lines) {
      out += ' ';
      ++i;
    } else if (c < 0x20 || c == 0x7f) {
      hex(c);
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else {
      // One UTF-8 sequence: its length from the lead byte, its tail all 10xxxxxx.
      const std::size_t len = c >= 0xf5 ? 0 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
      std::size_t k = 1;
      while (len != 0 && k < len && i + k < n && (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80) ++k;
      if (len == 0 || k < len) {
        hex(c);
        ++i;
      } else if (c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0) {
        hex(static_cast<unsigned char>(text[i + 1]));  // C1, named by its code point
        i += 2;
      } else {
        out.append(text, i, len);
        i += len;
      }
    }
  }
  return out;
}

}  // namespace graphrun
