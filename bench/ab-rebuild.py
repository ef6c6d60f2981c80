#!/usr/bin/env python3
"""Two stalecheck binaries on the first check after an edit and rebuild, in interleaved pairs.

    bench/ab-rebuild.py OLD NEW [PAIRS] [REAL_DIR]     # REAL_DIR: make-real.sh's folder (/tmp/real)

Each pair appends a comment to crates/app/src/main.rs, runs `cargo build --release --workspace`
(untimed), then the first `check --format json .` of each binary (each with a state folder of its own,
the order alternating from pair to pair), then the second check of each (a verdict-cache hit). Prints
the medians of wall and CPU (user + system of the child) time; the file is put back and rebuilt at
the end. Warm both state folders first: the script runs two checks of each before the first pair.
"""
import os, resource, statistics, subprocess, sys, tempfile, time

old, new = sys.argv[1], sys.argv[2]
pairs = int(sys.argv[3]) if len(sys.argv) > 3 else 11
os.chdir(sys.argv[4] if len(sys.argv) > 4 else '/tmp/real')
env = dict(os.environ, CARGO_NET_OFFLINE='true')
for k in ('STALECHECK_VERDICT_CACHE_TRACE', 'STALECHECK_VERDICT_CACHE'):
    env.pop(k, None)
states = {b: tempfile.mkdtemp(prefix='ab-state-') for b in (old, new)}


def run(binary):
    e = dict(env, XDG_STATE_HOME=states[binary])
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([binary, 'check', '--format', 'json', '.'], env=e,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = (time.perf_counter() - t) * 1000
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1000


main_rs = 'crates/app/src/main.rs'
orig = open(main_rs).read()
res = {(b, n): [] for b in (old, new) for n in (1, 2)}
for b in (old, new):
    run(b), run(b)
try:
    for i in range(pairs):
        with open(main_rs, 'a') as f:
            f.write('// ab %d %d\n' % (i, time.time_ns()))
        subprocess.run(['cargo', 'build', '--release', '--workspace', '-q'], env=env, stderr=subprocess.DEVNULL)
        time.sleep(0.2)
        order = [old, new] if i % 2 == 0 else [new, old]
        for n in (1, 2):
            for b in order:
                res[(b, n)].append(run(b))
finally:
    open(main_rs, 'w').write(orig)
    subprocess.run(['cargo', 'build', '--release', '--workspace', '-q'], env=env, stderr=subprocess.DEVNULL)
for (b, n), v in res.items():
    what = 'first check after edit+rebuild' if n == 1 else 'second check (hit)'
    print('%-32s %-40s wall %7.1f ms  cpu %7.1f ms' % (what, b, statistics.median(x[0] for x in v),
                                                       statistics.median(x[1] for x in v)))
