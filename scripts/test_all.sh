#!/usr/bin/env bash
# make test's suite. TEST_PARTS=2 (the default): first the tests marked `timing` alone (pytest --part timing: they
# judge wall-clock time, and another process's load makes a healthy node look slow); then two lanes side by side:
# the test cluster's tests (--part cluster) and then the real CUDA build, in the background (output in
# .cache/test-cluster.log, shown when done); the others (--part rest) and then the torch range's ends, in the
# foreground. TEST_PARTS=1: the whole pytest suite in one process, then the torch range, then the CUDA build.
# Every step runs even after one failed; the exit status is 1 when any did.
set -u
cd "$(dirname "$0")/.."
PY=.venv/bin/python
declare -A status
if [ "${TEST_PARTS:-2}" = 1 ]; then
    $PY -m pytest; status[pytest]=$?
    make --no-print-directory test-torch-range; status[test-torch-range]=$?
    make --no-print-directory test-cuda-build; status[test-cuda-build]=$?
else
    $PY -m pytest --part timing; status["pytest --part timing"]=$?
    mkdir -p .cache
    log=.cache/test-cluster.log
    echo "test: the test cluster's tests, then the CUDA build, run beside the others (their output: $log, shown" \
         "when they are done)"
    (
        $PY -m pytest --part cluster; echo "rc pytest --part cluster $?"
        make --no-print-directory test-cuda-build; echo "rc test-cuda-build $?"
    ) > "$log" 2>&1 &
    lane=$!
    $PY -m pytest --part rest; status["pytest --part rest"]=$?
    make --no-print-directory test-torch-range; status[test-torch-range]=$?
    wait "$lane"
    echo "== the test cluster's tests and the CUDA build ($log)"
    cat "$log"
    for step in "pytest --part cluster" test-cuda-build; do
        status[$step]=$(grep -a "^rc $step " "$log" | tail -1 | awk '{print $NF}')
        status[$step]=${status[$step]:-"(none: the lane died)"}
    done
fi
failed=0
for step in "${!status[@]}"; do
    echo "test: $step exited ${status[$step]}"
    [ "${status[$step]}" = 0 ] || failed=1
done
exit $failed
