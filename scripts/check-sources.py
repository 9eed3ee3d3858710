#!/usr/bin/env python3
"""Source rules `make test` enforces:

1. every public or open declaration in the library sources has a `///` summary;
2. Sources/ObjectGraph (the shared layer) imports no backend module.


Run by `make test`. Looks at every `public`/`open` declaration line in Sources/ and Backends/
(the command-line tool is not a library and is skipped) and requires a `///` comment (or an
attribute line such as `@discardableResult` preceded by one) directly above it.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DECL = re.compile(r'^\s*(@\w+(\([^)]*\))?\s+)*(public|open)\s+(?!import)')
missing = []
for folder in ("Sources/ObjectGraph", "Sources/ObjectGraphConformance", "Backends"):
    for path in sorted((ROOT / folder).rglob("*.swift")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            if not DECL.match(line) or re.match(r'^\s*(public|open)\s+(extension)\b', line.strip() + " "):
                continue
            back = number - 1
            while back >= 0 and re.match(r'^\s*@\w+', lines[back]) and not lines[back].strip().startswith("///"):
                back -= 1
            if back < 0 or not lines[back].strip().startswith("///"):
                missing.append(f"{path.relative_to(ROOT)}:{number + 1}: {line.strip()}")
backend_imports = []
for path in sorted((ROOT / "Sources/ObjectGraph").rglob("*.swift")):
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if re.match(r'^\s*(@\w+\s+)?import\s+(ObjectGraph\w+|CSQLite|CLMDB)\b', line):
            backend_imports.append(f"{path.relative_to(ROOT)}:{number + 1}: {line.strip()}")
if missing:
    print("public symbols without a /// summary:")
    print("\n".join(missing))
if backend_imports:
    print("the shared layer imports a backend:")
    print("\n".join(backend_imports))
if missing or backend_imports:
    sys.exit(1)
print("sources: every public symbol has a /// summary; the shared layer imports no backend")
