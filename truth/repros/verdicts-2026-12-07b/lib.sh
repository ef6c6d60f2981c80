# the first round's helpers (verdicts-2026-12-07/lib.sh), with work folders under /tmp/judge2
JUDGE=${JUDGE:-/tmp/judge2}
. "$(dirname "${BASH_SOURCE[0]}")/../verdicts-2026-12-07/lib.sh"
