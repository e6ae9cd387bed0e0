"""Text-format GraphDefs parsed with TensorFlow's rules for string literals.

TensorFlow reads text protos with protobuf's C++ TextFormat, and graphrun-cc does too. Python's
text_format disagrees with it on escapes: it accepts unknown ones ("\\q" stays a backslash and a
q) and refuses an octal escape past a byte ("\\777", which C++ truncates to 0xff). So string
literals here are checked and decoded as the C++ tokenizer does, with its messages and its
positions (1-based line; column counting bytes, a tab to the next multiple of 8), and the rest
of the parse is protobuf's. Raw bytes that are not UTF-8 may stand in a literal, as in C++. A
`string` field (not `bytes`) must still decode as UTF-8: protobuf's Python classes cannot hold
anything else, and TensorFlow would refuse such a name, op or input at import.
"""

import re

from google.protobuf import text_format

_SIMPLE = {ord(k): v for k, v in zip("abfnrtv\\?'\"", b"\a\b\f\n\r\t\v\\?'\"")}
_OCTAL = b"01234567"
_HEX = b"0123456789abcdefABCDEF"


def parse(data, message):
    """Merges the text `data` (bytes) into `message`; text_format.ParseError says what is wrong."""
    lines = data.decode("utf-8", "surrogateescape").splitlines(keepends=True) or [""]
    tokenizer = _Tokenizer(lines)
    parser = text_format._Parser()  # noqa: SLF001 - its public Parse builds the stock tokenizer
    parser.root_type = message.DESCRIPTOR.full_name
    parser._allow_multiple_scalars = False  # noqa: SLF001 - Parse, not Merge: a scalar given twice is refused
    while not tokenizer.AtEnd():
        parser._MergeField(tokenizer, message)  # noqa: SLF001
    return message


def _column(line, index):
    """C++'s 0-based column of character `index` of `line`: bytes, tabs to a multiple of 8."""
    column = 0
    for byte in line[:index].encode("utf-8", "surrogateescape"):
        column = column + 8 - column % 8 if byte == 9 else column + 1
    return column


_RETYPED = [  # protobuf Python's words -> protobuf C++'s, for errors at the same token
    (re.compile(r"Expected string but found: '(.*)'$", re.S), r"Expected string, got: \1"),
    (re.compile(r'Expected string but found: "(.*)"$', re.S), r"Expected string, got: \1"),
    (re.compile(r"Couldn't parse integer: (.*)$", re.S), r"Expected integer, got: \1"),
    (re.compile(r"Value out of range: (\d.*)$", re.S), r"Integer out of range (\1)"),
    (re.compile(r"Expected identifier or number, got (.*)\.$", re.S), r"Expected identifier, got: \1"),
]


class _Tokenizer(text_format.Tokenizer):
    field = None  # (line, column, name) of the last field name read

    def __init__(self, lines):
        self.all_lines = lines  # before the base class reads the first token
        self.closers = []  # the brace or angle bracket each open message ends with
        super().__init__(lines)

    def NextToken(self):  # noqa: N802 - protobuf's name
        """C++'s tokenizer refuses a byte outside a string literal that is not ASCII or is a control
        character as it reads the token, before the parser sees the one before it."""
        super().NextToken()
        first = self.token[:1]
        if not first or first in "'\"":
            return
        if ord(first) >= 0x80:
            code = first.encode("utf-8", "surrogateescape")[0]
            raise self._at((self._line, self._column), f"Interpreting non ascii codepoint {code}.")
        if ord(first) < 0x20:
            raise self._at((self._line, self._column), "Invalid control characters encountered in text.")

    def TryConsume(self, token):  # noqa: N802 - protobuf's name
        if not super().TryConsume(token):
            return False
        if token in "{<":
            self.closers.append("}" if token == "{" else ">")
        elif token in "}>" and self.closers:
            self.closers.pop()
        return True

    def ConsumeIdentifierOrNumber(self):  # noqa: N802 - protobuf's name
        self.field = (self._line, self._column, self.token)
        return super().ConsumeIdentifierOrNumber()

    def ParseErrorPreviousToken(self, message):  # noqa: N802 - protobuf's name
        return self._cc_error(message)

    def ParseError(self, message):  # noqa: N802 - protobuf's name
        return self._cc_error(message)

    def _cc_error(self, message):
        """The error as protobuf C++ reports it: its words, and the token it had reached (C++
        reads one token further than Python before it names most mistakes)."""
        token = self.token
        here = (self._line, self._column)
        after_token = self._after(self._line, self._column + len(token))
        after_field = self._after(self.field[0], self.field[1] + len(self.field[2])) if self.field else here
        at_end = not token and not self._more_lines
        if message.startswith("Expected identifier or number, got ") and token in ("}", ">") and self.closers:
            return self._at(here, f'Expected "{self.closers[-1]}", found "{token}".')
        if message.startswith("Couldn't parse integer: -") and len(token) > 1:  # C++ reads the sign apart
            return self._at((self._line, self._column + 1), f"Expected integer, got: {token[1:]}")
        if message.startswith("Value out of range: ") and token[:1].isdigit():  # the number as written
            return self._at(here, f"Integer out of range ({token})")
        if message == "Expected identifier.":
            return self._at(self._end() if at_end else here, f"Expected identifier, got: {token}")
        for pattern, words in _RETYPED:
            if pattern.match(message):
                if at_end and message.startswith("Expected identifier"):
                    return self._at(self._end(), "Expected identifier, got: ")
                return self._at(here, pattern.sub(words, message))
        name = self.field[2] if self.field else ""
        if ' has no field named "' in message:
            return self._at(after_field, message)
        if message.startswith("Enum type ") and " has no value named " in message:
            return self._at(after_token, f'Unknown enumeration value of "{token}" for field "{name}".')
        if message == 'Expected "true" or "false".':
            return self._at(after_token, f'Invalid value for boolean field "{name}". Value: "{token}".')
        if " should not have multiple " in message:
            return self._at(after_field, f'Non-repeated field "{name}" is specified multiple times.')
        if " another member of oneof " in message:
            return self._at(after_field, re.sub(r' for message type "[^"]*"\.$', ".", message))
        if message in ('Expected "}".', 'Expected ">".') and at_end:  # C++ wanted the next field's name
            return self._at(self._end(), "Expected identifier, got: ")
        if re.fullmatch(r'Expected "[^"]*"\.', message):
            return self._at(self._end() if at_end else here, f'{message[:-1]}, found "{token}".')
        if message.startswith("String missing ending quote"):
            line = self._current_line.rstrip("\r\n")
            last = self._line == len(self.all_lines) - 1 and not self._current_line.endswith("\n")
            why = "Unexpected end of string." if last else "String literals cannot cross line boundaries."
            return self._at((self._line, len(line)), why)
        return self._at(here, message)

    def _at(self, place, why):
        line, index = place
        text = self.all_lines[line] if line < len(self.all_lines) else ""
        return text_format.ParseError(why, line + 1, _column(text, index) + 1)

    def _after(self, line, index):
        """Where the next token starts after character `index` of `line`: blanks and # comments
        skipped, the file's end if nothing follows."""
        while line < len(self.all_lines):
            text = self.all_lines[line]
            while index < len(text) and text[index] in " \t\r\n\f\v":
                index += 1
            if index < len(text) and text[index] != "#":
                return line, index
            line, index = line + 1, 0
        return self._end()

    def _end(self):
        """The file's end as C++ places it: after the last line's last character, or at column 1
        of the line after a final newline."""
        if not self.all_lines:
            return 0, 0
        last = self.all_lines[-1]
        if last.endswith("\n"):
            return len(self.all_lines), 0
        return len(self.all_lines) - 1, len(last)

    def _error_at(self, offset, why):
        """A ParseError at byte `offset` of the current token, placed as C++ places it."""
        token = self.token.encode("utf-8", "surrogateescape")
        column = _column(self._current_line, self._column)
        for byte in token[:offset]:
            column = column + 8 - column % 8 if byte == 9 else column + 1
        return text_format.ParseError(why, self._line + 1, column + 1)

    def ConsumeString(self):  # noqa: N802 - protobuf's name
        line, column = self._line + 1, _column(self._current_line, self._column) + 1
        the_bytes = self.ConsumeByteString()
        try:
            return the_bytes.decode("utf-8")
        except UnicodeDecodeError:
            raise text_format.ParseError("a string is not valid UTF-8", line, column) from None

    def _ConsumeSingleByteString(self):  # noqa: N802 - protobuf's name
        text = self.token
        closed = len(text) >= 2 and text[0] in "'\"" and text[-1] == text[0] and (
            len(text[:-1]) - len(text[:-1].rstrip("\\"))) % 2 == 0
        token = text.encode("utf-8", "surrogateescape")
        if not closed:
            if not text or text[0] not in "'\"":
                return super()._ConsumeSingleByteString()  # its own error: not a string at all
            self._check_escapes(token, len(token))  # C++ names a bad escape before the missing quote
            raise self._cc_error("String missing ending quote")
        self._check_escapes(token, len(token) - 1)
        result = _unescape(token[1:-1])
        self.NextToken()
        return result

    def _check_escapes(self, token, end):
        """The C++ tokenizer's checks of token[1:end], in its order: an error sits where it stopped
        looking."""
        pos = 1
        while True:
            pos = token.find(b"\\", pos, end)  # a 10 MB literal is scanned at find's speed
            if pos < 0:
                return
            pos += 1
            char = token[pos] if pos < end else None
            if char is not None and (char in _SIMPLE or char in _OCTAL):
                pos += 1
            elif char == ord("x"):
                pos += 1
                if pos >= end or token[pos] not in _HEX:
                    raise self._error_at(pos, "Expected hex digits for escape sequence.")
            elif char == ord("u"):
                pos += 1
                for _ in range(4):
                    if pos >= end or token[pos] not in _HEX:
                        raise self._error_at(pos, "Expected four hex digits for \\u escape sequence.")
                    pos += 1
            elif char == ord("U"):
                pos += 1
                for allowed in (b"0", b"0", b"01") + (_HEX,) * 5:
                    if pos >= end or token[pos] not in allowed:
                        raise self._error_at(pos, "Expected eight hex digits up to 10ffff for \\U escape sequence")
                    pos += 1
            else:
                raise self._error_at(pos, "Invalid escape sequence in string literal.")


def _unescape(body):
    """The bytes C++ makes of a checked literal's body: an octal escape keeps its low 8 bits,
    \\u and \\U become UTF-8 (a lone surrogate too, as its three bytes), a surrogate pair one
    code point."""
    out, pos = bytearray(), 0
    while pos < len(body):
        backslash = body.find(b"\\", pos)
        if backslash < 0 or backslash + 1 == len(body):
            out += body[pos:]
            break
        out += body[pos:backslash]
        pos = backslash + 1
        char = body[pos]
        if char in _OCTAL:
            digits = 1
            while digits < 3 and pos + digits < len(body) and body[pos + digits] in _OCTAL:
                digits += 1
            out.append(int(body[pos:pos + digits], 8) & 0xFF)
            pos += digits
        elif char == ord("x"):
            digits = 1 if pos + 2 >= len(body) or body[pos + 2] not in _HEX else 2
            out.append(int(body[pos + 1:pos + 1 + digits], 16))
            pos += 1 + digits
        elif char in b"uU":
            width = 4 if char == ord("u") else 8
            code = int(body[pos + 1:pos + 1 + width], 16)
            pos += 1 + width
            low = body[pos + 2:pos + 6] if body[pos:pos + 2] == b"\\u" else b""
            if 0xD800 <= code < 0xDC00 and len(low) == 4 and all(c in _HEX for c in low) and (
                    0xDC00 <= int(low, 16) < 0xE000):
                code = 0x10000 + ((code - 0xD800) << 10) + int(low, 16) - 0xDC00
                pos += 6
            out += _utf8(code)
        else:
            out.append(_SIMPLE[char])
            pos += 1
    return bytes(out)


def _utf8(code):
    """UTF-8 as C++'s AppendUTF8 writes it: surrogates and code points up to 0x1fffff encoded
    as any other (the tokenizer lets nothing past that through)."""
    if code < 0x80:
        return bytes([code])
    if code < 0x800:
        return bytes([0xC0 | code >> 6, 0x80 | code & 0x3F])
    if code < 0x10000:
        return bytes([0xE0 | code >> 12, 0x80 | code >> 6 & 0x3F, 0x80 | code & 0x3F])
    return bytes([0xF0 | code >> 18, 0x80 | code >> 12 & 0x3F, 0x80 | code >> 6 & 0x3F, 0x80 | code & 0x3F])
