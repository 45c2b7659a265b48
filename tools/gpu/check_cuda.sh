#!/usr/bin/env bash
# The prepared GPU check (issue #22): run it once on a machine with an NVIDIA GPU and driver.
#
#   tools/gpu/check_cuda.sh            # from the repository root; OUT=<folder> keeps the logs
#
# 1. the device list (CUDA must be available, with its architecture);
# 2. the CUDA tests: the conformance corpus, Tensor kernels, copies, signals/events, the timer
#    (tests/runtime/test_cuda.py) and the conformance suite's CUDA target;
# 3. tools/gpu/tensor_cores.py: half/bfloat16 matmuls on tensor cores (mma.sync, padded and
#    multi-warp shapes) against NumPy, and a grid over the 65535-block y limit;
# 4. tools/gpu/bench_cuda.py: 4096^2 fp32/fp16 matmul, the fp16 -> fp32 matmul on tensor cores
#    (TFLOP/s) and MiniLM-shaped 32x128 inference, fusegrad next to PyTorch CUDA when torch is
#    importable.
# Each step has its own timeout (STEP_TIMEOUT seconds, default 240) and the script goes on
# after a failed step; the exit status is that of the first failed step. Uses .venv/bin/python
# when present, else python3 with the packages' src folders on PYTHONPATH (no install needed:
# numpy, pytest and llvmlite must be importable).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT="${OUT:-/tmp/fusegrad-gpu-check}"
mkdir -p "$OUT"
STEP_TIMEOUT="${STEP_TIMEOUT:-240}"
if [[ -x .venv/bin/python ]] && .venv/bin/python -c "" 2>/dev/null; then
  PY=.venv/bin/python
else
  PY="${PYTHON:-python3}"
  SRC=""
  for p in frontend uop-core codegen renderers runtime-hcq; do SRC="$SRC:$PWD/packages/$p/src"; done
  export PYTHONPATH="${SRC#:}${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1 CACHELEVEL="${CACHELEVEL:-0}"
status=0
step() {
  local name="$1"; shift
  echo "=== $name"
  timeout "$STEP_TIMEOUT" "$@" 2>&1 | tee "$OUT/$name.log"
  local rc=${PIPESTATUS[0]}
  echo "=== $name: exit $rc"
  if [[ $rc -ne 0 && $status -eq 0 ]]; then status=$rc; fi
}
step devices "$PY" -m fusegrad.runtime
step tests "$PY" -m pytest -q -n 0 -p no:cacheprovider tests/runtime/test_cuda.py
step conformance env FUSEGRAD_CONFORMANCE_PLUGINS=fusegrad.runtime.device_cuda \
  "$PY" -m pytest -q -n 0 -p no:cacheprovider tests/renderer/test_conformance.py -k CUDA
step tensor-cores "$PY" tools/gpu/tensor_cores.py --json "$OUT/tensor_cores.json"
step bench "$PY" tools/gpu/bench_cuda.py --json "$OUT/bench.json"
exit $status
