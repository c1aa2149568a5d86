#!/usr/bin/env python3
"""Checks config/scene-table.schema.json with an independent validator (python3-jsonschema).

--valid DIR:       every *.json validates against the schema.
--invalid DIR:     every *.json is rejected by the schema (a syntax error counts as a rejection);
                   the C++ tests check that the loader rejects each with its .expected lines.
--loader-only DIR: every *.json is accepted by the schema: these hold errors only the loader can
                   see (duplicate ids or keys, references, geometry). If the schema learns to reject
                   one, move it to the invalid folder.
Exit status 0 when all hold, 1 otherwise (each failure on stderr).
"""
import argparse
import json
import pathlib
import sys

import jsonschema


def load(path):
    with open(path, "rb") as f:
        return json.loads(f.read().decode("utf-8"))


def schema_errors(validator, path):
    try:
        document = load(path)
    except (ValueError, UnicodeDecodeError) as e:
        return [f"not JSON: {e}"]
    return [f"/{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(document)]


def tables(folder):
    found = sorted(pathlib.Path(folder).glob("*.json"))
    if not found:
        sys.exit(f"check_schema: no tables in {folder}")
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schema", required=True)
    parser.add_argument("--valid", action="append", default=[])
    parser.add_argument("--invalid", action="append", default=[])
    parser.add_argument("--loader-only", action="append", default=[])
    args = parser.parse_args()

    schema = load(args.schema)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)

    failures = []
    checked = 0
    for folder in args.valid + args.loader_only:
        for path in tables(folder):
            checked += 1
            errors = schema_errors(validator, path)
            failures += [f"{path}: expected valid by the schema, but {e}" for e in errors]
    for folder in args.invalid:
        for path in tables(folder):
            checked += 1
            if not schema_errors(validator, path):
                failures.append(f"{path}: expected the schema to reject it, but it validates")
    for f in failures:
        print(f, file=sys.stderr)
    print(f"check_schema: {checked} tables checked, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
