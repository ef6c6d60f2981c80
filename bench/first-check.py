#!/usr/bin/env python3
"""Stalecheck binaries on the first check after an edit and rebuild, repeated from a copied state folder.

    bench/first-check.py PAIRS BIN... [--real REAL_DIR]     # REAL_DIR: make-real.sh's folder (/tmp/real)

Once: appends a comment to crates/app/src/main.rs and runs `cargo build --release --workspace`, then
for each binary two `check --format json .` (the verdict and its memos stored in a state folder of its
own), a copy of that state folder kept; then appends another comment and rebuilds. Each round copies
each binary's kept state folder back and times its first check (a miss with the last verdict's memos,
as after a real edit and rebuild), the order alternating from round to round, then the stat floor
(`find target -printf '%s %T@\\n'`). Prints the medians of wall and CPU (user + system) time and the
ratio to the floor's median. Unlike ab-rebuild.py no rebuild runs between rounds, so many rounds are
cheap; the environment is fixed (PATH, HOME, the toolchain variables), since the verdict key holds it.
The file stays edited (a comment): restore it by hand when it matters.
"""
import os, resource, shutil, statistics, subprocess, sys, tempfile, time

args = sys.argv[1:]
real = '/tmp/real'
if '--real' in args:
    i = args.index('--real')
    real = args[i + 1]
    del args[i:i + 2]
if len(args) < 2:
    sys.exit(__doc__)
pairs, bins = int(args[0]), [os.path.abspath(b) for b in args[1:]]
os.chdir(real)
env = {k: os.environ[k] for k in ('PATH', 'HOME', 'RUSTUP_HOME', 'CARGO_HOME', 'USER', 'LANG') if k in os.environ}
env.update(CARGO_NET_OFFLINE='true', PWD=real)
work = tempfile.mkdtemp(prefix='first-check-')


def build():
    subprocess.run(['cargo', 'build', '--release', '--workspace'], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def check(b, state):
    e = dict(env, XDG_STATE_HOME=state)
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([b, 'check', '--format', 'json', '.'], env=e, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = (time.perf_counter() - t) * 1000
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1000


main_rs = 'crates/app/src/main.rs'
with open(main_rs, 'a') as f:
    f.write('// first-check.py base %d\n' % time.time_ns())
build()
for i, b in enumerate(bins):
    run, base = os.path.join(work, 'run-%d' % i), os.path.join(work, 'base-%d' % i)
    os.makedirs(run)
    check(b, run), check(b, run)
    shutil.copytree(run, base)
with open(main_rs, 'a') as f:
    f.write('// first-check.py edit %d\n' % time.time_ns())
build()
res = {b: [] for b in bins}
floor = []
for r in range(pairs):
    order = list(enumerate(bins)) if r % 2 == 0 else list(reversed(list(enumerate(bins))))
    for i, b in order:
        run = os.path.join(work, 'run-%d' % i)
        shutil.rmtree(run)
        shutil.copytree(os.path.join(work, 'base-%d' % i), run)
        res[b].append(check(b, run))
    t = time.perf_counter()
    subprocess.run("find target -printf '%s %T@\\n' >/dev/null", shell=True)
    floor.append((time.perf_counter() - t) * 1000)
shutil.rmtree(work)
fm = statistics.median(floor)
print('stat floor %.1f ms (median of %d)' % (fm, len(floor)))
for b in bins:
    w = statistics.median(x[0] for x in res[b])
    c = statistics.median(x[1] for x in res[b])
    print('%-40s wall %6.1f ms (%.2fx the floor)  cpu %6.1f ms' % (b, w, w / fm, c))
