"""Runs the TF1 programs: `.venv/bin/python -m tests.tf1_programs [--api graphdef] [--json | --write] [NAME...]`.

--api tensorflow (the default) or graphdef picks the module handed to each program;
--json prints {program: output, or {"error": message}} on one line (the test suite reads it);
--write stores TensorFlow's output of each program under transcripts/.
"""

import argparse
import json
import sys
import traceback

from tests.tf1_programs import PROGRAMS, TRANSCRIPTS, graphdef_module, run, tensorflow_v1


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"programs (default: all: {', '.join(PROGRAMS)})")
    parser.add_argument("--api", choices=("tensorflow", "graphdef"), default="tensorflow")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--json", action="store_true")
    mode.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in PROGRAMS]
    if unknown:
        parser.error(f"unknown program {', '.join(unknown)}")
    if args.write and args.api != "tensorflow":
        parser.error("--write stores TensorFlow's output; it needs --api tensorflow")
    tf = tensorflow_v1() if args.api == "tensorflow" else graphdef_module()
    results = {}
    for name in args.names or PROGRAMS:
        try:
            results[name] = run(tf, name)
        except Exception as exc:  # one program failing must not hide the others' output
            results[name] = {"error": "".join(traceback.format_exception_only(type(exc), exc)).strip()}
    if args.json:
        print(json.dumps(results))
        return 0
    failed = 0
    for name, output in results.items():
        if isinstance(output, dict):
            failed += 1
            print(f"== {name}: FAILED: {output['error']}")
        elif args.write:
            TRANSCRIPTS.mkdir(exist_ok=True)
            (TRANSCRIPTS / f"{name}.txt").write_text(output)
            print(f"wrote transcripts/{name}.txt ({len(output.splitlines())} lines)")
        else:
            print(f"== {name}\n{output}", end="")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
