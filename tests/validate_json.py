#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
"""validate_json.py SCHEMA FILE... - check every line of each FILE (JSON
Lines: memacct -j output, the daemon's --json-log) against SCHEMA (JSON Schema
2020-12) with Debian's python3-jsonschema. Blank lines are skipped; a line that
is not JSON fails. Prints one line per error; exit 0 when all are valid, 1
otherwise, 2 on usage or a broken schema."""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("validate_json.py: python3-jsonschema missing (make deps installs it)", file=sys.stderr)
    sys.exit(2)


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        schema = json.load(f)
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as e:
        print("%s: not a valid 2020-12 schema: %s" % (argv[1], e.message), file=sys.stderr)
        return 2
    v = jsonschema.Draft202012Validator(schema)
    bad = total = 0
    for name in argv[2:]:
        with open(name) as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                total += 1
                try:
                    obj = json.loads(line)
                except ValueError as e:
                    print("%s:%d: not JSON: %s" % (name, n, e))
                    bad += 1
                    continue
                errs = list(v.iter_errors(obj))
                for e in errs:
                    # a oneOf failure says little: show the branch of its schema
                    best = jsonschema.exceptions.best_match([e])
                    path = "/".join(str(p) for p in best.absolute_path)
                    print("%s:%d: /%s: %s" % (name, n, path, best.message[:300]))
                bad += bool(errs)
    print("validate_json: %d of %d objects valid against %s" % (total - bad, total, argv[1]))
    return 1 if bad or not total else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
