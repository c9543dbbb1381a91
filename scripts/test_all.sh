#!/usr/bin/env bash
# make test's suite: pytest in two parts side by side (the test cluster's tests, --part cluster, in the background;
# the others, --part rest, in the foreground), then the torch range's ends (started as soon as the other tests are
# done, while the cluster's may still run), then the real CUDA build. Every step runs even after one failed; the
# exit status is 1 when any did. TEST_PARTS=1 (make test's default): the whole pytest suite in one process, then the
# same two steps.
set -u
cd "$(dirname "$0")/.."
PY=.venv/bin/python
declare -A status
if [ "${TEST_PARTS:-1}" = 1 ]; then
    $PY -m pytest; status[pytest]=$?
else
    mkdir -p .cache
    log=.cache/test-cluster.log
    echo "test: the test cluster's tests run beside the others (their output: $log, shown when they are done)"
    $PY -m pytest --part cluster > "$log" 2>&1 &
    cluster=$!
    $PY -m pytest --part rest; status["pytest --part rest"]=$?
fi
make --no-print-directory test-torch-range; status[test-torch-range]=$?
if [ -n "${cluster:-}" ]; then
    wait "$cluster"; status["pytest --part cluster"]=$?
    echo "== the test cluster's tests (pytest --part cluster, $log)"
    cat "$log"
fi
make --no-print-directory test-cuda-build; status[test-cuda-build]=$?
failed=0
for step in "${!status[@]}"; do
    echo "test: $step exited ${status[$step]}"
    [ "${status[$step]}" = 0 ] || failed=1
done
exit $failed
