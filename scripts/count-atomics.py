#!/usr/bin/env python3
"""Counts the atomic read-modify-writes the Swift runtime executed in a callgrind profile.

Callgrind counts a retain or a release as the dozen instructions of `swift_retain` or
`swift_release`, but when the object is not immortal one of them is a `lock cmpxchg`, which
on the benchmark machine takes a few nanoseconds, the time of dozens of ordinary instructions
(a loop adding one retain and release per iteration took 12-20 ns more an iteration). So a
change can lower the instruction count and still leave the time where it was, or the other
way round; this makes the atomics visible. It sums, per function (per calling context with `--separate-callers`),
how often each atomic instruction of libswiftCore (lock-prefixed, or an exchange with
memory) ran.

Usage (a release build of the benchmark; the toggle names the timed body):

    valgrind --tool=callgrind --dump-instr=yes --separate-callers=2 \\
        --callgrind-out-file=/tmp/cg.out \\
        '--toggle-collect=$s21ObjectGraphBenchmarks10ChatBodiesO8fetchAll*fU_' \\
        .build/release/objectgraph-bench fetch-all --store lmdb --repetitions 1
    scripts/count-atomics.py /tmp/cg.out [--top N]
"""
import argparse
import collections
import re
import subprocess

RUNTIME = "/opt/swift/usr/lib/swift/linux/libswiftCore.so"


def lock_instructions(library):
    """Addresses of the library's atomic instructions, each with its function."""
    listing = subprocess.run(["objdump", "-d", "--no-show-raw-insn", library],
                             capture_output=True, text=True, check=True).stdout
    locks, function = {}, None
    for line in listing.splitlines():
        header = re.match(r"^([0-9a-f]+) <(.*)>:$", line)
        if header:
            function = header.group(2)
        elif "\tlock " in line or re.search(r"\txchg\s.*\(", line):
            # (An exchange with memory is atomic without the prefix.)
            locks[int(line.split(":")[0], 16)] = function
    return locks


def count(profile, library, locks):
    """Executions of `locks` in `profile`, by the function (or calling context) that ran them."""
    names = {"ob": {}, "fn": {}}
    current_object = current_function = None
    address = 0
    after_call = False
    counts = collections.Counter()
    # Callgrind compresses names ("fn=(12) name" once, "fn=(12)" after) and addresses
    # (relative to the line before); a cost line right after "calls=" is the call's inclusive
    # cost, which only moves the address.
    for line in open(profile):
        named = re.match(r"^(c?)(ob|fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
        if named:
            callee, kind, number, name = named.groups()
            if name:
                names[kind][number] = name
            if not callee:
                if kind == "ob":
                    current_object = names["ob"].get(number)
                else:
                    current_function = names["fn"].get(number)
            continue
        if line.startswith("calls="):
            after_call = True
            continue
        if not line or line[0] not in "0+-*":
            continue
        fields = line.split()
        position = fields[0]
        if position.startswith("0x"):
            address = int(position, 16)
        elif position.startswith("+"):
            address += int(position[1:])
        elif position.startswith("-"):
            address -= int(position[1:])
        if after_call:
            after_call = False
            continue
        if current_object == library and address in locks and len(fields) > 2:
            context = current_function if current_function and "'" in current_function else locks[address]
            counts[context] += int(fields[2])
    return counts


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("profile", help="a callgrind profile written with --dump-instr=yes")
    parser.add_argument("--top", type=int, default=20, help="functions or contexts listed")
    parser.add_argument("--library", default=RUNTIME, help="the Swift runtime library")
    arguments = parser.parse_args()
    counts = count(arguments.profile, arguments.library, lock_instructions(arguments.library))
    for context, executions in counts.most_common(arguments.top):
        print(f"{executions:>12,} {context}")
    print(f"{sum(counts.values()):>12,} atomic read-modify-writes in {arguments.library}")


if __name__ == "__main__":
    main()
