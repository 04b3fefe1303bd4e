#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Which cases each boot of a make bench results directory still has to run.

    bench/resume.py [--apply] DIR BOOTS CASE...

Prints one line per boot that has cases left: the boot, the name of the
guest output directory to run them in, and the cases, in CASE order:

    2 boot2.2 tput-ssd build

bench/run runs the tput4 cases of such a line in a guest of their own,
the part after the others' (boot2.3 here when there are others).

A boot may have run in several guests ("parts"): DIR/bootN, then
DIR/bootN.2, DIR/bootN.3, ... , each listed in DIR/raw/status.txt with its
exit status once bench/run merged its raw tables into DIR/raw/.  A case is
done in a part when its output.log has the case's "# case" line, no FAIL
line until the next "# case" line, and either such a next line or the
part's exit status 0 after it: the case that was running when a guest was
killed, or when bench/run itself was, is not done.

With --apply, DIR is made ready for those runs: the raw rows of a part
that bench/run did not get to merge (it was stopped during that part) are
merged for the cases done in it, and its status line says "interrupted";
every row of a boot's cases left to run is removed from DIR/raw/*.tsv, so
the rerun's rows are the only ones; raw/resumed.txt says, per boot, which
parts ran which cases and which cases run again where.  Without --apply
nothing is written.

    bench/resume.py --merge DIR PART

merges every raw row of DIR/PART/raw/ into DIR/raw/ (bench/run, after each
guest) and copies that guest's other raw files there.
"""
import glob
import os
import re
import sys

TABLES_WITHOUT_CASE = {"cost.tsv": "cost", "cost-hist.tsv": "cost"}


def wide(case):
    """A case bench/run runs after the others of a boot, in a guest of
    more vCPUs: the boot's next part."""
    return case.startswith("tput4-")


def die(msg):
    sys.stderr.write("bench/resume.py: %s\n" % msg)
    sys.exit(2)


def read_status(raw):
    """{part: status string} in file order."""
    st = {}
    p = os.path.join(raw, "status.txt")
    if os.path.exists(p):
        for line in open(p):
            f = line.split()
            if len(f) >= 2:
                st[f[0]] = f[1]
    return st


def parts_of(d, boot):
    """bootN, bootN.2, bootN.3, ... that exist as directories, in order."""
    found = []
    for p in glob.glob(os.path.join(d, "boot%d" % boot)) + glob.glob(os.path.join(d, "boot%d.*" % boot)):
        name = os.path.basename(p)
        m = re.fullmatch(r"boot%d(?:\.([0-9]+))?" % boot, name)
        if m and os.path.isdir(p):
            found.append((int(m.group(1) or 1), name))
    return [n for _, n in sorted(found)]


def done_cases(output_log, status):
    """The cases a part finished without a FAIL line (see the module doc)."""
    if not os.path.exists(output_log):
        return []
    cases = []	# [case, failed, closed]
    for line in open(output_log, errors="replace"):
        m = re.match(r"# case (\S+) \(boot ", line)
        if m:
            if cases:
                cases[-1][2] = True
            cases.append([m.group(1), False, False])
        elif line.startswith("FAIL") and cases:
            cases[-1][1] = True
    if cases and status == "0":
        cases[-1][2] = True
    return [c for c, failed, closed in cases if closed and not failed]


def case_col(name, header):
    if "case" in header:
        return header.index("case")
    return None


def row_case(name, header, row):
    i = case_col(name, header)
    if i is not None:
        return row[i] if i < len(row) else None
    return TABLES_WITHOUT_CASE.get(name)


def read_table(path):
    with open(path) as f:
        lines = [l.rstrip("\n") for l in f if l.strip()]
    if not lines:
        return None, []
    return lines[0].split("\t"), [l.split("\t") for l in lines[1:]]


def write_table(path, header, rows):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\t".join(header) + "\n")
        for r in rows:
            f.write("\t".join(r) + "\n")
    os.replace(tmp, path)


def merge_part(d, part, keep):
    """Append the rows of part/raw/*.tsv whose case is in keep (all rows
    if keep is None) to d/raw, and copy its other files there."""
    raw = os.path.join(d, "raw")
    for src in sorted(glob.glob(os.path.join(d, part, "raw", "*.tsv"))):
        name = os.path.basename(src)
        header, rows = read_table(src)
        if header is None:
            continue
        if keep is not None:
            rows = [r for r in rows if row_case(name, header, r) in keep]
        dst = os.path.join(raw, name)
        if os.path.exists(dst):
            h2, old = read_table(dst)
            if h2 is not None and h2 != header:
                die("%s: header differs from %s's" % (dst, src))
        else:
            old = []
        write_table(dst, header, old + rows)
    for src in glob.glob(os.path.join(d, part, "raw", "*")):
        name = os.path.basename(src)
        if name.endswith(".tsv") or not os.path.isfile(src):
            continue
        # meta-bootN.txt of a later part keeps the part's name.
        m = re.fullmatch(r"meta-boot([0-9]+)\.txt", name)
        if m and "." in part:
            name = "meta-%s.txt" % part
        with open(src, "rb") as f, open(os.path.join(raw, name), "wb") as g:
            g.write(f.read())


def strip_rows(d, boot, cases):
    """Remove every row of this boot and these cases from d/raw/*.tsv."""
    for path in sorted(glob.glob(os.path.join(d, "raw", "*.tsv"))):
        name = os.path.basename(path)
        header, rows = read_table(path)
        if header is None or "boot" not in header:
            continue
        bi = header.index("boot")
        kept = [r for r in rows if not (r[bi] == str(boot) and row_case(name, header, r) in cases)]
        if len(kept) != len(rows):
            write_table(path, header, kept)


def plan(d, boots, cases, apply):
    raw = os.path.join(d, "raw")
    if not os.path.exists(os.path.join(d, "meta.txt")):
        die("%s has no meta.txt (not a bench/run results directory)" % d)
    os.makedirs(raw, exist_ok=True)
    status = read_status(raw)
    out = []
    notes = []
    for b in range(1, boots + 1):
        parts = parts_of(d, b)
        done = set()
        ran = []
        for p in parts:
            st = status.get(p)
            dc = done_cases(os.path.join(d, p, "output.log"), st)
            if st is None and apply:
                # bench/run stopped during this part: its rows were never merged.
                merge_part(d, p, set(dc) - done)
                with open(os.path.join(raw, "status.txt"), "a") as f:
                    f.write("%s interrupted\n" % p)
                status[p] = "interrupted"
            done |= set(dc)
            ran.append("%s (status %s) finished %s" % (p, status.get(p, "none: bench/run stopped"),
                                                       " ".join(dc) or "no case"))
        todo = [c for c in cases if c not in done]
        if not todo:
            continue
        # After the last part, by number: a part whose guest never
        # started has no directory.
        n = int(parts[-1].partition(".")[2] or 1) + 1 if parts else 1
        nxt = "boot%d" % b if n == 1 else "boot%d.%d" % (b, n)
        if parts:
            again = []
            for group in ([c for c in todo if not wide(c)], [c for c in todo if wide(c)]):
                if group:
                    again.append("%s run again in boot%d.%d" % (" ".join(group), b, n))
                    n += 1
            notes.append("boot%d: %s; %s" % (b, "; ".join(ran), ", ".join(again)))
        if apply:
            strip_rows(d, b, set(todo))
        out.append("%d %s %s" % (b, nxt, " ".join(todo)))
    if apply and notes:
        rp = os.path.join(raw, "resumed.txt")
        seen = set(l.rstrip("\n") for l in open(rp)) if os.path.exists(rp) else set()
        with open(rp, "a") as f:
            for n in notes:
                if n not in seen:
                    f.write(n + "\n")
    return out


def main(argv):
    if argv and argv[0] == "--merge":
        if len(argv) != 3:
            die("usage: bench/resume.py --merge DIR PART")
        merge_part(argv[1], argv[2], None)
        return
    apply = False
    if argv and argv[0] == "--apply":
        apply, argv = True, argv[1:]
    if len(argv) < 3 or not re.fullmatch(r"[1-9][0-9]*", argv[1]):
        die("usage: bench/resume.py [--apply] DIR BOOTS CASE...")
    for line in plan(argv[0], int(argv[1]), argv[2:], apply):
        print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
