"""Hand-coded optimizations: good opts for a kernel without searching.

CPUs (``has_local`` False):

1. a matmul-shaped kernel is blocked for registers (``MATMUL_BLOCK``): UNROLL the reduce
   axis, UPCAST the block axis (the one broadcast; a long one is padded to a multiple of the
   block first, ``MATMUL_PAD_ROWS``), then UPCAST the vector axis (the output
   axis the store walks with stride 1) to whole vectors — upcast last, so its lanes are the
   innermost, vector-contiguous ones; then the reduce is cut into tiles (TILE,
   ``MATMUL_TILES``) whose loop goes around the output loops, so every block of rows reuses
   a cached tile of the vector operand; when the reduce is too short to tile, the loop over
   vector blocks goes outside the loop over row blocks instead (SWAP); THREAD splits the row
   blocks across the cores. When both operands are contiguous along the reduce axis instead
   (``x @ W.T``), vectors run along it (PARTIALS) and both output axes are upcast a little
   (``DOT_BLOCK``);
2. a reduction whose loads walk its innermost reduce axis with stride 1 (a sum, max,
   softmax or layernorm over the last axis, a full reduction) keeps lane-wise partial
   results in ``REDUCE_ACCUMULATORS`` vector registers along that axis (PARTIALS), combined
   once after the loop; its output axes are not upcast (their lanes would be gathers).
   A kernel of sequential reductions over each row (softmax or layernorm in one kernel:
   loops over the row for the max, the sum, then the output) gets PARTIALS on each of its
   reduce axes and its output axis upcast: each loop is its own, so their lanes don't
   multiply (``lane_count``);
3. otherwise the output axis most accesses walk with stride 1 is upcast to the vector width
   (``REDUCE_ACCUMULATORS`` vectors when a long reduction runs along a strided axis: a sum
   over the first or a middle axis, whose ADD/MAX reduce is then tiled by ``REDUCE_ROW_TILE``
   rows so the rows stream in step), and small constant reductions (at most
   ``SMALL_REDUCE``) are unrolled whole;
4. a kernel with enough work is split across the cores with THREAD on its outermost loop.

GPU-like renderers (``has_local``): a kernel of row reductions (``kernel.row_axes``) gets a
workgroup of rows, each thread looping over its own row (``kernel.finish``); big reductions
into few outputs are grouped across a workgroup (GROUPTOP; GROUP where the renderer's
``group_top`` is False, its workgroup being SIMD lanes); a matmul gets a register block per
thread (``GPU_MATMUL_BLOCK``: both output axes upcast, the reduce unrolled), other kernels
have their contiguous output axis upcast by 4; then output axes become workgroup threads
(LOCAL), innermost first, filling a workgroup of ``GPU_WORKGROUP`` threads within the
renderer's ``local_max``. A matmul one of the renderer's tensor cores takes (input dtypes; a
shape not a multiple of the core's is padded first when that adds at most ``GPU_TC_PAD_MAX``
of the work) gets TC instead of the register block, then ``GPU_TC_BLOCK`` core tiles per
warp (UPCAST of the remaining output axes: the tiles share their operands' fragments).

Every step goes through ``apply_opt``, so a step that does not apply is skipped.
"""

from __future__ import annotations

from fusegrad.codegen.opt.analysis import (
    MatmulShape,
    accesses,
    contiguous_in,
    loads_contiguous_in,
    matmul_shape,
    operand_stride,
    range_work,
    stride,
)
from fusegrad.codegen.opt.kernel import (
    MAX_UPCAST,
    KernelOptError,
    Opt,
    OptOps,
    apply_opt,
    axes_of,
    const_size,
    kernel_axes,
    lane_count,
    nodes_of,
    row_axes,
)
from fusegrad.codegen.renderer import Renderer
from fusegrad.uop import AxisType, DType, GroupOp, Ops, UOp, dtypes, prod

#: reductions with at most this many iterations are unrolled whole on CPUs
SMALL_REDUCE = 8
#: kernels with fewer loop iterations than this stay on one core
THREAD_MIN_WORK = 1 << 15
#: ...unless their iterations times the float ops of one iteration reach this: an Adam-like
#: update (a dozen float ops per element, a square root and a division among them) over
#: 2 x 12345 parameters (300k ops) measured 35 us of one core's CPU time. NOT yet timed split
#: vs unsplit: on the shared VM (load 8-15 on 2 cores) both gave 62-70 us best of 200, and a
#: memory-bound 2 x 1234567 update 3.3-4.4 ms either way; re-measure on a quiet machine
THREAD_MIN_OPS = 1 << 18
#: an output axis no core count divides is padded to a multiple of the cores (PADTO: its last
#: block masked, a tail of at most cores - 1 iterations, each gated as a whole vector) when it
#: has at least this many iterations (the tail then adds at most 1/32 to the work): a flat
#: buffer of 2 x odd elements (a fused optimizer's parameters) upcast 2-wide would otherwise
#: stay on one core
THREAD_PAD_MIN = 32
#: register blocking of a matmul on CPUs: (UNROLL K, UPCAST of the broadcast axis, UPCAST of
#: the vector axis in vectors). (1, 6, 2): a 6 x 16 float32 block on AVX2 is 12 accumulators
#: in ymm registers (+ 2 B vectors + a broadcast: 15 of 16), 8 loads per 12 fused
#: multiply-adds; 1024^3 on one core 1.3x the 4 x 16 block (8 accumulators, 6 loads per 8),
#: which stays the fallback; unrolling K measured slower (and its lanes are not contracted
#: into FMAs).
MATMUL_BLOCK = (1, 6, 2)
#: the largest tile of the vector operand (bytes) every core reuses whole in a tiled matmul:
#: THREAD splits the rows up to it and the columns beyond (2048^3, 256 KiB tiles: 1.2-1.4x
#: splitting the rows), so each core's share of the tile stays in its L2. 1024^3 (128 KiB
#: tiles) splits the columns: with B's rows padded off the 4 KiB L1 aliasing (the scheduler's
#: layout copies) 1.15-1.25x splitting the rows (unpadded, rows were 1.2x columns)
MATMUL_CORE_TILE = 96 * 1024
#: a block axis that the block does not divide is padded (PADTO, masked rows) to a multiple of
#: the block times the cores when it has at least this many rows (<= 3% of padded rows):
#: 1024 -> 1032 rows in 6-row blocks, 172 per core pair
MATMUL_PAD_ROWS = 192
#: loop over the blocks of the broadcast axis inside the loop over vector blocks (SWAP):
#: 2.5-3.5x faster at 512/1024 (the B panel is reused from cache instead of streamed) when
#: the reduce is not tiled
MATMUL_SWAP = True
#: the register block of ``x @ W.T``-like matmuls (both operands contiguous along K): (UPCAST
#: of the row axis, UPCAST of the column axis), vectors along K (PARTIALS): 8 accumulators, 6
#: vector loads per 8 multiply-adds. x[1024, 384] @ W.T[384, 1536]: 0.73 of NumPy (4, 2),
#: 0.71 (4, 3), 0.64 (2, 4), 0.53 (2, 2); 0.35 with vectors along the columns (gathers).
DOT_BLOCK = (4, 2)
#: TILE sizes tried for a matmul's reduce axis (first that divides it, and leaves at least
#: two tiles): the loop over K tiles goes around the output loops, so the blocks of rows
#: reuse one tile of B (32 rows x 16 columns) from L1/L2 instead of streaming K rows of B at
#: a 4 KiB stride, which no cache level holds (set conflicts). 1024^3 fp32: 32 and 64 are
#: 1.4-1.6x the untiled SWAP order, 128 1.2x, 256 1.1x.
MATMUL_TILES = (32, 64)
#: tile only with at least this many rows (block axis): each tile of B is reused once per
#: block of rows, while the output is read back once per tile. x[36, 384] @ W[384, 1536]
#: ran faster untiled (best of 21: 20 vs 11-13 GFLOP/s on a loaded machine)
MATMUL_TILE_ROWS = 256
#: vector accumulators of a long reduction on CPUs (PARTIALS along a contiguous reduce axis,
#: UPCAST of the contiguous output axis otherwise): a vector add's latency is 3-4 cycles and
#: two issue per cycle, so one accumulator runs at an eighth of the adds the loads allow.
#: Single-thread, 4096x4096 float32 on the loaded 2-core VM, interleaved medians: sum over the
#: last axis 5.4-5.5 GB/s with 2 or 4 ymm accumulators (PARTIALS 16/32) vs 3.4 for the old
#: 8-row UPCAST (a gather per row); NumPy 5.7. Full sum: 3.9 GB/s (4) / 3.3 (2) / 1.0 (scalar).
#: Over the first axis: 1.9-2.4 GB/s (4) / 1.2-1.5 (2) / 0.5-0.8 (1).
REDUCE_ACCUMULATORS = 4
#: rows of a reduction over a strided axis summed per pass over the outputs (TILE of the ADD
#: reduce; partial sums in the output buffer): the block of 32 columns then reads 8 rows at
#: once, each a stream the prefetcher follows. 4096x4096 sum over axis 0, one thread:
#: 6.0 GB/s (8) / 4.9-5.2 (16) / 2.3 (32) / 2.6 (64) / 1.9-2.4 untiled: more than 8 rows a
#: 16 KiB apart overflow the 8 ways of an L1 set. Max over axis 0: 17-19 GB/s tiled by 8
#: vs 2.5 upcast alone (TILE keeps running maxima in the output too).
REDUCE_ROW_TILE = 8
#: a reduction computing more than this many ops from its reduce axis alone is not given
#: PARTIALS: every lane would repeat them, where the rows of an output UPCAST share them.
#: Measured on argmax's arange when it reached the kernel as 40+ ops of index bits per element
#: (4096x4096: PARTIALS 0.5x the 8-row UPCAST); the scheduler now folds that bit sum to the
#: column index (``schedule/indexing.fold_bit_sums``), so argmax's compare kernel gets
#: PARTIALS: 7 vector ops per 8 columns (load, ==, NaN test, or, n - column, select, max)
#: against 8 scalar loads and inserts per 8 rows for the UPCAST (the VM was too loaded, load
#: 9-12, to time the two apart: 22.5 vs 13-15 GB/s at their best runs)
REDUCE_RANGE_WORK = 8


#: a small output axis that only chooses between loads (a convolution's 9 taps in its im2col
#: copy: each tap reads the input shifted, gated by ``tap == t``) is upcast whole when it has
#: at most this many elements: each lane's gates are then constants and it makes one load
#: instead of one per tap. 4x64x9x56x56 im2col copy (the 3x3 pad-1 conv's first kernel):
#: 128 ms -> 6 ms (9 taps upcast, pixels 8 wide). A depthwise conv reads its taps in the
#: kernel that sums them: the reduce axis is unrolled whole instead (2x64x56^2, 3x3: 100 ms
#: -> 2 ms on the loaded VM)
SELECT_AXIS_MAX = 16


class _Plan:
    """The opts chosen so far and the AST they give."""

    def __init__(self, ast: UOp, renderer: Renderer) -> None:
        self.ast = ast
        self.renderer = renderer
        self.opts: list[Opt] = []

    def position(self, axis_id: int) -> int | None:
        ids = [r.arg[0] for r in kernel_axes(self.ast)]
        return ids.index(axis_id) if axis_id in ids else None

    def try_opt(self, op: OptOps, axis_id: int, amount: int) -> bool:
        """Apply ``op`` on the axis with id ``axis_id`` if it applies."""
        pos = self.position(axis_id)
        return pos is not None and self._try(Opt(op, pos, amount))

    def try_core(self, core: int) -> bool:
        """Apply TC with the renderer's tensor core ``core`` if it applies."""
        return self._try(Opt(OptOps.TC, core))

    def _try(self, opt: Opt) -> bool:
        """Apply ``opt``, keeping it, if it applies."""
        try:
            self.ast = apply_opt(self.ast, opt, self.renderer)
        except KernelOptError:
            return False
        self.opts.append(opt)
        return True

    def range_of(self, axis_id: int) -> UOp:
        return next(r for r in kernel_axes(self.ast) if r.arg[0] == axis_id)


def _value_dtype(ast: UOp) -> DType:
    stores = nodes_of(ast, Ops.STORE)
    return stores[0].src[1].dtype.scalar() if stores else dtypes.float32


def vector_width(renderer: Renderer, dt: DType) -> int:
    """The widest vector the renderer has for ``dt`` (1 when none)."""
    return max(renderer.vector_widths.get(dt.scalar(), ()), default=1)


def _fitting(size: int | None, candidates: tuple[int, ...]) -> int | None:
    if size is None:
        return None
    return next((c for c in candidates if c > 1 and size % c == 0), None)


def _work(ast: UOp) -> int:
    return int(prod(const_size(r) or 16 for r in kernel_axes(ast)))


def _float_ops(ast: UOp) -> int:
    """Float ALU nodes in the kernel (one iteration's float work, shared values once)."""
    return sum(
        1 for u in ast.toposort() if u.op in GroupOp.ALU and dtypes.is_float(u.dtype.scalar())
    )


def _worth_threads(ast: UOp) -> bool:
    """Enough work to split over cores: ``THREAD_MIN_WORK`` iterations, or fewer iterations
    of enough float ops (``THREAD_MIN_OPS``)."""
    work = _work(ast)
    return work >= THREAD_MIN_WORK or work * _float_ops(ast) >= THREAD_MIN_OPS


def _roles(plan: _Plan, shape: MatmulShape) -> tuple[UOp, UOp]:
    """(vector axis, block axis) of a matmul: the output axis the store walks with stride 1
    becomes vector lanes (its operand loads whole vectors), the other is broadcast."""
    store = accesses(plan.ast)[0]
    if stride(store.src[1], shape.m) == 1 and stride(store.src[1], shape.n) != 1:
        return shape.m, shape.n
    return shape.n, shape.m


def _matmul_block(plan: _Plan, width: int) -> bool:
    shape = matmul_shape(plan.ast)
    if shape is None:
        return False
    unroll, up_block, vectors = MATMUL_BLOCK
    vec_axis, block_axis = _roles(plan, shape)
    k, vec, block = shape.k.arg[0], vec_axis.arg[0], block_axis.arg[0]
    if _dot_products(plan, shape, vec_axis, width):
        _threads(plan, prefer=block)
        return True
    if unroll > 1:
        plan.try_opt(OptOps.UNROLL, k, unroll)
    _block_rows(plan, block, up_block)
    lanes = next(
        (a for a in (width * vectors, width, 4, 2) if plan.try_opt(OptOps.UPCAST, vec, a)), 1
    )
    if _in_panels(shape, vec_axis, lanes):
        # each core streams its own panels (columns), the row blocks inside re-read each
        # panel from L1/L2: 1024^3 with B in panels, columns 1.2-1.3x splitting the rows
        swapped = _block_axis_inside(plan, vec, block)
        _threads(plan, prefer=block if swapped == vec else vec)
    elif _tile_reduce(plan, k, const_size(block_axis)):
        _threads(plan, prefer=_split_for_cache(plan, k, block, vec_axis))
    else:
        _threads(plan, prefer=_block_axis_inside(plan, vec, block))
    return True


def _block_rows(plan: _Plan, block: int, up_block: int) -> None:
    """UPCAST the block axis (id ``block``) by ``up_block`` — padding it first when that does
    not divide it and it is long (``MATMUL_PAD_ROWS``) — else by 4 or 2."""
    size = const_size(plan.range_of(block))
    if up_block > 1 and size is not None and size % up_block and size >= MATMUL_PAD_ROWS:
        cores = plan.renderer.max_threads if plan.renderer.has_threads else 1
        plan.try_opt(OptOps.PADTO, block, up_block * max(cores, 1))
    for amount in (up_block, 4, 2) if up_block > 1 else ():
        if plan.try_opt(OptOps.UPCAST, block, amount):
            return


def _dot_products(plan: _Plan, shape: MatmulShape, vec_axis: UOp, width: int) -> bool:
    """The block for ``x @ W.T``-like operands (``DOT_BLOCK``): when the vector axis'
    operand is not contiguous along it but both operands are along K, vectors run along K
    (PARTIALS: lane-wise partial sums, added up after the loop) and both output axes are
    upcast as plain registers. False (no opts) for other layouts."""
    vec_operand = shape.b if vec_axis is shape.n else shape.a
    if operand_stride(vec_operand, vec_axis) == 1:
        return False
    if any(operand_stride(x, shape.k) != 1 for x in (shape.a, shape.b)):
        return False
    block = (shape.m if vec_axis is shape.n else shape.n).arg[0]
    k, vec = shape.k.arg[0], vec_axis.arg[0]
    lanes = _fitting(const_size(shape.k), (width, 4))
    if lanes is None:
        return False
    up_block, up_vec = DOT_BLOCK
    for axis, amount in ((block, up_block), (vec, up_vec)):
        _ = plan.try_opt(OptOps.UPCAST, axis, amount) or plan.try_opt(OptOps.UPCAST, axis, 2)
    return plan.try_opt(OptOps.PARTIALS, k, lanes)


def _in_panels(shape: MatmulShape, vec_axis: UOp, lanes: int) -> bool:
    """Whether the vector operand is stored in panels (the scheduler's layout copies): each
    step of K reads the block's ``lanes`` columns from one contiguous run, so the register
    block streams its panel and tiling K would only add passes over the output."""
    vec_operand = shape.b if vec_axis is shape.n else shape.a
    step = operand_stride(vec_operand, shape.k)
    return step is not None and 0 < step <= lanes


def _tile_reduce(plan: _Plan, k: int, rows: int | None) -> bool:
    """TILE the matmul's reduce axis (id ``k``) by the first of ``MATMUL_TILES`` that leaves
    at least two tiles, when there are ``MATMUL_TILE_ROWS`` rows to reuse the tiles."""
    size = const_size(plan.range_of(k))
    if size is None or rows is None or rows < MATMUL_TILE_ROWS:
        return False
    fits = [t for t in MATMUL_TILES if size % t == 0 and size >= 2 * t]
    return any(plan.try_opt(OptOps.TILE, k, tile) for tile in fits)


def _split_for_cache(plan: _Plan, k: int, block: int, vec: UOp) -> int:
    """The axis THREAD splits in a tiled matmul: the block (row) axis, so every core reuses
    the whole tile of the vector operand (K-tile x columns), unless that tile is larger than
    ``MATMUL_CORE_TILE`` bytes: then the vector axis (``vec``: its range before the opts),
    each core keeping its share of the tile."""
    tile, cols = const_size(plan.range_of(k)), const_size(vec)
    if tile is None or cols is None:
        return block
    nbytes = tile * cols * _value_dtype(plan.ast).itemsize
    return vec.arg[0] if nbytes > MATMUL_CORE_TILE else block


def _block_axis_inside(plan: _Plan, vec: int, block: int) -> int:
    """Loop over blocks of the broadcast axis inside the loop over vector blocks, so the
    vector operand's panel (K x lanes) is reused from cache by every block of rows while
    the broadcast operand streams along its contiguous rows. The block axis' id after it."""
    if block > vec or not MATMUL_SWAP:
        return block
    vec_pos, block_pos = plan.position(vec), plan.position(block)
    if vec_pos is None or block_pos is None:
        return block
    loops = plan.range_of(vec).arg[1] is AxisType.LOOP is plan.range_of(block).arg[1]
    return vec if loops and plan.try_opt(OptOps.SWAP, block_pos, vec_pos) else block


def _vectorize(plan: _Plan, width: int) -> None:
    outputs = axes_of(plan.ast, AxisType.LOOP)
    if not outputs or width == 1:
        return
    best = max(outputs, key=lambda r: (contiguous_in(plan.ast, r), r.arg[0]))
    if contiguous_in(plan.ast, best) == 0:
        return
    sizes = tuple(w for w in (width, width // 2, 4, 2) if w > 1)
    amount = _fitting(const_size(best), sizes)
    if amount is not None:
        plan.try_opt(OptOps.UPCAST, best.arg[0], amount)


def _long_reduce(plan: _Plan) -> UOp | None:
    """The innermost reduce axis when it has a constant size above ``SMALL_REDUCE``."""
    reduces = axes_of(plan.ast, AxisType.REDUCE)
    size = const_size(reduces[-1]) if reduces else None
    return reduces[-1] if size is not None and size > SMALL_REDUCE else None


def _reduce_partials(plan: _Plan, width: int) -> bool:
    """PARTIALS of ``REDUCE_ACCUMULATORS`` vectors (or fewer lanes, as many as divide the
    axis) along the innermost reduce axis, when more of the loads it moves walk it with
    stride 1 than any output axis. False (no opts) otherwise."""
    red = _long_reduce(plan)
    if red is None or width == 1:
        return False
    value = next(u for u in nodes_of(plan.ast, Ops.REDUCE) if red in u.src[1:]).src[0]
    if range_work(value, red) > REDUCE_RANGE_WORK:
        return False
    along = loads_contiguous_in(plan.ast, red)
    outputs = axes_of(plan.ast, AxisType.LOOP)
    if along == 0 or any(loads_contiguous_in(plan.ast, r, red) >= along for r in outputs):
        return False
    sizes = (REDUCE_ACCUMULATORS * width, 2 * width, width, 4, 2)
    lanes = _fitting(const_size(red), tuple(n for n in sizes if n <= MAX_UPCAST))
    return lanes is not None and plan.try_opt(OptOps.PARTIALS, red.arg[0], lanes)


def _reduce_across(plan: _Plan, width: int) -> None:
    """A long reduction over a strided axis: the contiguous output axis upcast to
    ``REDUCE_ACCUMULATORS`` vectors, and an ADD/MAX reduce tiled by ``REDUCE_ROW_TILE``."""
    red = _long_reduce(plan)
    outputs = axes_of(plan.ast, AxisType.LOOP)
    if red is None or width == 1 or not outputs:
        return
    best = max(outputs, key=lambda r: (contiguous_in(plan.ast, r), r.arg[0]))
    if loads_contiguous_in(plan.ast, best, red) == 0:
        return
    sizes = (REDUCE_ACCUMULATORS * width, 2 * width, width, width // 2, 4, 2)
    amount = _fitting(const_size(best), tuple(n for n in sizes if n <= MAX_UPCAST))
    if amount is None or not plan.try_opt(OptOps.UPCAST, best.arg[0], amount):
        return
    if (const_size(red) or 0) >= 2 * REDUCE_ROW_TILE:
        plan.try_opt(OptOps.TILE, red.arg[0], REDUCE_ROW_TILE)


def _unroll_small(plan: _Plan) -> None:
    for rng in reversed(axes_of(plan.ast, AxisType.REDUCE)):  # innermost first
        size = const_size(rng)
        if size is not None and 1 < size <= SMALL_REDUCE and lane_count(plan.ast) * size <= 64:
            plan.try_opt(OptOps.UNROLL, rng.arg[0], 0)


def _threads(plan: _Plan, prefer: int | None = None) -> None:
    """THREAD on the ``prefer`` axis (an axis id) if it splits evenly, else on the outermost
    LOOP axis that does."""
    cores = plan.renderer.max_threads
    if not plan.renderer.has_threads or cores < 2 or not _worth_threads(plan.ast):
        return
    loops = axes_of(plan.ast, AxisType.LOOP)
    first = [r for r in loops if r.arg[0] == prefer]
    for rng in first + [r for r in loops if r.arg[0] != prefer]:
        amount = _fitting(const_size(rng), tuple(range(cores, 1, -1)))
        if amount is not None and plan.try_opt(OptOps.THREAD, rng.arg[0], amount):
            return
    _padded_threads(plan, loops, cores)


def _padded_threads(plan: _Plan, loops: list[UOp], cores: int) -> None:
    """THREAD over the outermost long-enough LOOP axis padded to a multiple of the cores
    (``THREAD_PAD_MIN``), when no axis splits evenly."""
    for rng in loops:
        size = const_size(rng)
        if size is None or size < THREAD_PAD_MIN:
            continue
        before = (plan.ast, len(plan.opts))
        if not plan.try_opt(OptOps.PADTO, rng.arg[0], cores):
            continue
        if plan.try_opt(OptOps.THREAD, rng.arg[0], cores):
            return
        plan.ast, plan.opts = before[0], plan.opts[: before[1]]  # no split: no padding


def _select_axes(plan: _Plan) -> None:
    """UPCAST (UNROLL, for a reduce axis) whole every small axis (``SELECT_AXIS_MAX``) that
    at least two loads are gated on without reading along it: a choice between views (see
    ``SELECT_AXIS_MAX``; a depthwise conv sums its 9 taps in the kernel that reads them)."""
    for rng in axes_of(plan.ast, AxisType.LOOP, AxisType.REDUCE):
        size = const_size(rng)
        if size is None or not 1 < size <= SELECT_AXIS_MAX:
            continue
        picks = 0
        for ld in nodes_of(plan.ast, Ops.LOAD):
            idx = ld.src[0].src[1] if len(ld.src[0].src) > 1 else None
            if idx is None or idx.op is not Ops.WHERE:
                continue
            gate, address = idx.src[0], idx.src[1]
            picks += rng in gate.ranges and rng not in address.ranges
        if picks >= 2:
            whole = OptOps.UNROLL if rng.arg[1] is AxisType.REDUCE else OptOps.UPCAST
            plan.try_opt(whole, rng.arg[0], size)


def _row_reductions(plan: _Plan, width: int) -> bool:
    """A kernel of reductions over each row followed by a loop over the row's outputs
    (softmax in one kernel: the max, the sum of exp, then the output; the scheduler keeps
    row-uniform reductions in their consumer): PARTIALS on every long reduce axis read with
    stride 1, then the output axis vectorized. False (no opts) for any other kernel (no
    output axis along the row, or a reduction inside another's loop)."""
    reduces = nodes_of(plan.ast, Ops.REDUCE)
    if not reduces or width == 1 or not row_axes(plan.ast):
        return False  # no output axis along the row
    if any(r.arg[1] is not AxisType.LOOP for u in reduces for r in u.ranges):
        return False  # a reduction inside another's loop: not one per row
    sizes = (REDUCE_ACCUMULATORS * width, 2 * width, width, 4, 2)
    for red in [r for u in reduces for r in u.src[1:]]:
        size = const_size(red)
        if size is None or size <= SMALL_REDUCE or loads_contiguous_in(plan.ast, red) == 0:
            continue
        lanes = _fitting(size, tuple(n for n in sizes if n <= MAX_UPCAST))
        if lanes is not None:
            plan.try_opt(OptOps.PARTIALS, red.arg[0], lanes)
    _vectorize(plan, width)
    return True


def _cpu(plan: _Plan) -> None:
    width = vector_width(plan.renderer, _value_dtype(plan.ast))
    if _matmul_block(plan, width):
        _unroll_small(plan)
        return
    if _row_reductions(plan, width):
        _unroll_small(plan)
        _threads(plan)
        return
    _select_axes(plan)
    selects = len(axes_of(plan.ast, AxisType.UPCAST))
    if not _reduce_partials(plan, width):
        _reduce_across(plan, width)
        if len(axes_of(plan.ast, AxisType.UPCAST)) == selects:
            _vectorize(plan, width)
    _unroll_small(plan)
    _threads(plan)


#: threads per workgroup the GPU rules fill at most (a multiple of NVIDIA's 32-thread warp:
#: 16-thread workgroups leave half of every warp idle)
GPU_WORKGROUP = 256
#: fewer threads per workgroup (down to a warp, ``GPU_WARP``) when a kernel would otherwise
#: have fewer than this many workgroups: one per multiprocessor is the least a GPU needs
GPU_MIN_WORKGROUPS = 128
GPU_WARP = 32
#: reductions of at least 256 into at most this many outputs are split across workgroup
#: threads (GROUPTOP): 16 threads each, up to ``GPU_WORKGROUP`` for at most
#: ``GPU_FEW_OUTPUTS`` outputs (a full sum would otherwise run on one thread per output)
GPU_GROUP_OUTPUTS = 16384
GPU_FEW_OUTPUTS = 64
#: register block of a matmul on GPUs: (UPCAST of the vector axis, UPCAST of the other output
#: axis, UNROLL of the reduce axis): 16 accumulators per thread, 8 loads per 16 multiply-adds
#: (1 load per multiply-add unblocked)
GPU_MATMUL_BLOCK = (4, 4, 4)
#: the register block where a workgroup's invocations are one core's SIMD lanes
#: (``Renderer.simd_lanes``, llvmpipe): 4 x 2 accumulator vectors of the lanes (16 AVX2
#: registers), the reduce unrolled 8 times (the lanes' masked loop costs ~10 cycles per
#: iteration): 512 matmul on LVP 0.6-1.0x the LLVM path's kernel vs 0.1x with the GPU block
#: (lanes 4 columns apart: gathers)
LANES_MATMUL_BLOCK = (2, 4, 8)
#: a matmul is register-blocked only when each output axis has at least this many elements
GPU_MATMUL_MIN = 64
#: core tiles per warp after TC, (along M, along N): 2 x 2 mma per k step, A's fragments
#: each used by 2 and B's by 2 (loads per mma 2x fewer than one tile)
GPU_TC_BLOCK = (2, 2)
#: a matmul whose shape is not a multiple of a tensor core's is padded to it (PADTO: masked
#: rows, columns and k steps) for TC when the padded work is at most this times the work: the
#: cores' rate is several times the FMA lanes' (H100 SXM datasheet, fp16 dense: 989 vs 134
#: TFLOPS), so a third of the work wasted still gains; a bound on the waste, not timed (no GPU)
GPU_TC_PAD_MAX = 1.5


def _gpu_group(plan: _Plan, out_size: int) -> None:
    if out_size > GPU_GROUP_OUTPUTS:
        return
    wide = (256, 128, 64, 32, 16, 8, 4) if out_size <= GPU_FEW_OUTPUTS else (16, 8, 4)
    for rng in axes_of(plan.ast, AxisType.REDUCE):
        size = const_size(rng)
        if size is None or size < 256:
            continue
        amounts = [a for a in wide if size % a == 0] or [0]
        op = OptOps.GROUPTOP if plan.renderer.group_top else OptOps.GROUP
        if any(plan.try_opt(op, rng.arg[0], a) for a in amounts):
            return


def _big_matmul(plan: _Plan) -> bool:
    """A matmul whose output axes both have at least ``GPU_MATMUL_MIN`` elements."""
    shape = matmul_shape(plan.ast)
    if shape is None:
        return False
    sizes = [const_size(shape.m), const_size(shape.n)]
    return all(size is not None and size >= GPU_MATMUL_MIN for size in sizes)


def _gpu_matmul(plan: _Plan, block: tuple[int, int, int] = GPU_MATMUL_BLOCK) -> None:
    """The register ``block`` of a matmul (see ``_big_matmul``)."""
    shape = matmul_shape(plan.ast)
    assert shape is not None
    up_vec, up_other, unroll = block
    vec_axis, other = _roles(plan, shape)
    plan.try_opt(OptOps.UPCAST, other.arg[0], up_other)
    plan.try_opt(OptOps.UPCAST, vec_axis.arg[0], up_vec)  # last: the innermost lanes
    plan.try_opt(OptOps.UNROLL, shape.k.arg[0], unroll)


def _gpu_upcast(plan: _Plan) -> None:
    outputs = axes_of(plan.ast, AxisType.LOOP, AxisType.GLOBAL)
    if not outputs:
        return
    best = max(outputs, key=lambda r: (contiguous_in(plan.ast, r), r.arg[0]))
    amount = _fitting(const_size(best), (4, 2))
    if amount is not None and (const_size(best) or 0) >= 16:
        plan.try_opt(OptOps.UPCAST, best.arg[0], amount)


def _workgroup_budget(plan: _Plan, outputs: list[UOp]) -> int:
    """Threads still to give to output axes: ``GPU_WORKGROUP`` (within ``local_max``) less
    the GROUP threads, fewer when the kernel would have under ``GPU_MIN_WORKGROUPS``."""
    local_max = plan.renderer.local_max or (1024, 1024, 64)
    kinds = (AxisType.LOCAL, AxisType.GROUP_REDUCE)
    grouped = int(prod(const_size(r) or 1 for r in axes_of(plan.ast, *kinds)))
    threads = int(prod(const_size(r) or 16 for r in outputs)) * grouped
    wanted = max(GPU_WARP, min(GPU_WORKGROUP, threads // GPU_MIN_WORKGROUPS))
    return max(min(wanted, max(local_max)) // grouped, 1)


def _gpu_locals(plan: _Plan) -> None:
    """LOCAL on the output axes: innermost first, each the largest power of two that divides
    it and fits what is left of the workgroup (a warp at most for the innermost when others
    follow, so workgroups are 2-D tiles) and the ``local_max`` of the id it becomes. Applied
    outermost first: the last LOCAL gets the newest axis id, the innermost thread id
    (``lidx0``, CUDA's ``threadIdx.x``), so a warp's threads walk the contiguous axis."""
    local_max = plan.renderer.local_max or (1024, 1024, 64)
    outputs = axes_of(plan.ast, AxisType.LOOP, AxisType.GLOBAL)
    budget = _workgroup_budget(plan, outputs)
    chosen: list[tuple[int, int]] = []
    for rng in reversed(outputs):
        cap = GPU_WARP if not chosen and len(outputs) > 1 else budget
        limit = min(budget, cap, local_max[min(len(chosen), len(local_max) - 1)])
        sizes = tuple(1 << b for b in range(limit.bit_length() - 1, 0, -1))
        amount = _fitting(const_size(rng), sizes)
        if amount is not None:
            chosen.append((rng.arg[0], amount))
            budget //= amount
    for axis_id, amount in reversed(chosen):
        plan.try_opt(OptOps.LOCAL, axis_id, amount)


def _gpu_tensor_core(plan: _Plan) -> bool:
    """TC with the first of the renderer's tensor cores that takes the matmul (False: none
    does, or the kernel is not a matmul), then ``GPU_TC_BLOCK`` core tiles per warp."""
    shape = matmul_shape(plan.ast)
    if not plan.renderer.tensor_cores or shape is None:
        return False
    m_id, n_id = shape.m.arg[0], shape.n.arg[0]
    for i, core in enumerate(plan.renderer.tensor_cores):
        ast, opts = plan.ast, list(plan.opts)
        if not _pad_for_core(plan, shape, core.dims) or not plan.try_core(i):
            plan.ast, plan.opts = ast, opts
            continue
        for axis_id, amount in zip((m_id, n_id), GPU_TC_BLOCK, strict=True):
            rest = const_size(plan.range_of(axis_id))
            if amount > 1 and rest is not None and rest >= 2 * amount:
                plan.try_opt(OptOps.UPCAST, axis_id, amount)
        return True
    return False


def _pad_for_core(plan: _Plan, shape: MatmulShape, dims: tuple[int, int, int]) -> bool:
    """PADTO the matmul's N, M and K to multiples of the core's ``dims`` where they are not
    (False: a size is unknown or the padding exceeds ``GPU_TC_PAD_MAX``)."""
    pads = []
    for rng, size in zip((shape.n, shape.m, shape.k), dims, strict=True):
        have = const_size(rng)
        if have is None:
            return False
        pads.append((rng.arg[0], have, -(-have // size) * size, size))
    if prod(p for _, _, p, _ in pads) > GPU_TC_PAD_MAX * prod(h for _, h, _, _ in pads):
        return False
    return all(p == h or plan.try_opt(OptOps.PADTO, a, s) for a, h, p, s in pads)


def _row_locals(plan: _Plan, along: list[UOp]) -> None:
    """LOCAL on the innermost row axis of a kernel of row reductions: a workgroup of rows
    (each thread loops over its own row)."""
    local_max = plan.renderer.local_max or (1024, 1024, 64)
    rows = [r for r in axes_of(plan.ast, AxisType.LOOP) if r not in along]
    if not rows:
        return
    sizes = tuple(1 << b for b in range(min(GPU_WARP, local_max[0]).bit_length() - 1, 0, -1))
    amount = _fitting(const_size(rows[-1]), sizes)
    if amount is not None:
        plan.try_opt(OptOps.LOCAL, rows[-1].arg[0], amount)


def _gpu(plan: _Plan) -> None:
    if _gpu_tensor_core(plan):
        return
    if along := row_axes(plan.ast):  # one thread per row, looping over it (``kernel.finish``)
        _row_locals(plan, along)
        return
    outputs = axes_of(plan.ast, AxisType.LOOP, AxisType.GLOBAL)
    _gpu_group(plan, int(prod(const_size(r) or 16 for r in outputs)))
    big = _big_matmul(plan)  # before LOCAL divides the axes
    if plan.renderer.simd_lanes:  # lanes first: the innermost part of each axis
        _gpu_locals(plan)
        if big:
            _gpu_matmul(plan, LANES_MATMUL_BLOCK)
        else:
            _gpu_upcast(plan)
        return
    if big:
        _gpu_matmul(plan)
    else:
        _gpu_upcast(plan)
    _gpu_locals(plan)


def hand_coded_optimizations(ast: UOp, renderer: Renderer) -> list[Opt]:
    """Opts for ``ast`` on ``renderer`` chosen by the rules in the module docstring."""
    plan = _Plan(ast, renderer)
    if renderer.has_local:
        _gpu(plan)
    else:
        _cpu(plan)
    return plan.opts
