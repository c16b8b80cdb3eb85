#!/usr/bin/env python3
"""check_one_voice.py: fails when atrace's own code words a diagnostic by
hand instead of through base/diagnostics.h (docs/ARCHITECTURE.md, "Errors").

What atrace says on stderr has one prefix per kind ("atrace: ",
"atrace: warning: ", "atrace: note: ") and one wording of an errno
(base::errno_text), each written once, in base/diagnostics.cpp. This
script finds, outside that file:
  - a write to stderr or to a FILE* (fprintf, fputs, perror, std::cerr)
    whose text starts with "atrace:", with or without a leading "\\r";
  - strerror() or perror(): an errno worded somewhere else.
Comments are not code: a comment may quote a message.

usage: check_one_voice.py [ROOT]   (exit 1 and one line per violation)
"""
import os
import re
import sys

FOLDERS = ["base", "formats", "uprobes", "record", "analysis", "output", "tools"]
OWNER = {"base/diagnostics.h", "base/diagnostics.cpp"}
SOURCE = re.compile(r"\.(cc|cpp|h|hpp)$")
# A statement that writes an "atrace:" line by hand.
HAND_WRITTEN = re.compile(
    r'\b(?:fprintf|fputs|dprintf|vfprintf)\s*\((?:[^;]|\n)*?"\\?r?atrace:'
    r'|\bperror\s*\(\s*"atrace:'
    r'|\bcerr\s*<<\s*"\\?r?atrace:')
ERRNO_WORDING = re.compile(r"\b(?:strerror|strerror_r|perror)\s*\(")
STRING_OR_COMMENT = re.compile(r'"(?:\\.|[^"\\\n])*"|//[^\n]*|/\*.*?\*/', re.S)


def code_only(text):
    """The text with comments blanked (lines kept), string literals kept."""
    def blank(m):
        s = m.group(0)
        return s if s.startswith('"') else re.sub(r"[^\n]", " ", s)
    return STRING_OR_COMMENT.sub(blank, text)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    bad = []
    checked = 0
    for folder in FOLDERS:
        for dirpath, _, files in os.walk(os.path.join(root, folder)):
            for name in sorted(files):
                if not SOURCE.search(name):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                if rel in OWNER:
                    continue
                checked += 1
                with open(path, encoding="utf-8", errors="replace") as f:
                    code = code_only(f.read())
                for m in HAND_WRITTEN.finditer(code):
                    line = code.count("\n", 0, m.start()) + 1
                    bad.append(f"{rel}:{line}: an \"atrace:\" line written by hand;"
                               " use base::error/warning/note/progress (base/diagnostics.h)")
                for m in ERRNO_WORDING.finditer(code):
                    line = code.count("\n", 0, m.start()) + 1
                    bad.append(f"{rel}:{line}: an errno worded by hand;"
                               " use base::errno_text (base/diagnostics.h)")
    for line in bad:
        print(line, file=sys.stderr)
    if checked == 0:
        print("check_one_voice: no sources found under " + root, file=sys.stderr)
        return 1
    print(f"check_one_voice: {checked} files, {len(bad)} violations")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
