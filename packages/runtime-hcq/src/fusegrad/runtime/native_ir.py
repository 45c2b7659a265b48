"""The compiled half of the CPU device's rings: LLVM IR for the worker loop, the core pool and
the futex helpers, compiled once per machine through the renderers' LLVM compiler (cached on
disk) and mapped by their ELF loader.

Memory shared with Python (every field a little-endian uint64 word; futex words use the low
32 bits of theirs):

* ring control ``R``: 0 head (commands published by the host), 1 tail (commands finished by
  the worker), 2 doorbell (futex), 3 worker asleep, 4 stop, 5 slot mask, 6 slot array,
  7 callback (``int32 cb(uint64 token)``: the host runs a command), 8 core pool (0: none),
  9 the worker's next nap (ns), 10 the slice-time table (0: off; see below);
* a command slot: 32 words: 0 kind, 1-3 operands, 4 the argument position of the core id,
  5-6 start and end time (ns, written by the worker), 8-31 the kernel's arguments;
* a core pool ``P``: 0 ticket (generation << 32 | slices << 16 | next slice), 1 generation
  (futex), 2 stop, 3 the slot being run, 4 slices done (futex), 5 helpers asleep, 6 the
  slice-time row of the slot being run (0: off), 7 helpers started (each takes its core id);
* the slice-time table: per slot, ``TIMED_SLICES`` rows of 4 words (slice, core, start ns,
  end ns): a split kernel's first ``TIMED_SLICES`` slices write theirs while it is on (the
  ring's worker is core 0, the pool's helpers 1, 2, ...);
* a signal: 0 value (futex: its low half), 1 timestamp, 2 host sleepers, 3 device sleepers.

Kernels are called as ``void f(uint64 x MAX_ARGS)``: the CPU calling convention passes
pointers and int32 values in integer registers and 8-byte stack slots in order, so extra
trailing arguments are harmless and the core id goes at its position among them.
"""

from __future__ import annotations

import platform

SLOT_WORDS = 32
SLOT_BYTES = SLOT_WORDS * 8
ARG_WORD = 8
MAX_ARGS = SLOT_WORDS - ARG_WORD
NO_CORE = 255
TIMED_SLICES = 16  # slices per command whose times the slice-time table keeps

KIND_BEGIN, KIND_EXEC, KIND_COPY, KIND_SIGNAL, KIND_WAIT, KIND_TIMESTAMP, KIND_CALLBACK = (
    1, 2, 3, 4, 5, 6, 7,
)  # fmt: skip

SPIN_WORKER = 300  # pause loops before the worker sleeps (a few microseconds)
SPIN_WAIT = 300  # before a WAIT command or the pool's leader sleeps on a futex
SLICE_NS = 20_000_000  # the longest sleep between checks of the stop flag (WAIT, pool)
# An idle worker naps on its doorbell: first NAP_MIN_NS after its last command, doubling up to
# NAP_MAX_NS; a command published without ringing (cheap work) starts at the latest then.
NAP_MIN_NS = 1_000_000
NAP_MAX_NS = 64_000_000

# a spin-wait hint (x86 PAUSE, arm YIELD) as an intrinsic: llvmlite has no inline-asm parser
_X86_PAUSE = ("declare void @llvm.x86.sse2.pause()", "@llvm.x86.sse2.pause()")
_ARM_YIELD = ("declare void @llvm.aarch64.hint(i32)", "@llvm.aarch64.hint(i32 1)")
_PAUSE = {"x86_64": _X86_PAUSE, "amd64": _X86_PAUSE, "aarch64": _ARM_YIELD, "arm64": _ARM_YIELD}
_FUTEX = {"x86_64": 202, "amd64": 202, "aarch64": 98, "arm64": 98}

_HELPERS = """
declare i64 @syscall(i64, ...)
declare i32 @clock_gettime(i32, ptr)
declare ptr @memcpy(ptr, ptr, i64)

define i64 @fg_now() #0 {
  %ts = alloca [2 x i64], align 8
  %r = call i32 @clock_gettime(i32 1, ptr %ts)
  %s = load i64, ptr %ts
  %np = getelementptr i64, ptr %ts, i64 1
  %n = load i64, ptr %np
  %m = mul i64 %s, 1000000000
  %t = add i64 %m, %n
  ret i64 %t
}

define void @fg_futex_wait(ptr %addr, i32 %expected, i64 %ns) #0 {
  %ts = alloca [2 x i64], align 8
  %s = udiv i64 %ns, 1000000000
  %n = urem i64 %ns, 1000000000
  store i64 %s, ptr %ts
  %np = getelementptr i64, ptr %ts, i64 1
  store i64 %n, ptr %np
  %e = zext i32 %expected to i64
  %r = call i64 (i64, ...) @syscall(i64 {futex}, ptr %addr, i64 128, i64 %e, ptr %ts, ptr null, i64 0)
  ret void
}

define void @fg_futex_wake(ptr %addr, i32 %count) #0 {
  %c = zext i32 %count to i64
  %r = call i64 (i64, ...) @syscall(i64 {futex}, ptr %addr, i64 129, i64 %c, ptr null, ptr null, i64 0)
  ret void
}

{pause_decl}
define void @fg_pause() #0 {
  call void {pause}
  ret void
}

define void @fg_signal_set(ptr %sig, i64 %value) #0 {
  store atomic i64 %value, ptr %sig seq_cst, align 8
  %hp = getelementptr i64, ptr %sig, i64 2
  %h = load atomic i64, ptr %hp seq_cst, align 8
  %dp = getelementptr i64, ptr %sig, i64 3
  %d = load atomic i64, ptr %dp seq_cst, align 8
  %any = or i64 %h, %d
  %none = icmp eq i64 %any, 0
  br i1 %none, label %done, label %wake
wake:
  call void @fg_futex_wake(ptr %sig, i32 2147483647)
  br label %done
done:
  ret void
}

; block until the signal reaches %value or *%stop is set
define void @fg_signal_wait(ptr %sig, i64 %value, ptr %stop) #0 {
entry:
  %i = alloca i32
  store i32 0, ptr %i
  br label %spin
spin:
  %v = load atomic i64, ptr %sig acquire, align 8
  %ok = icmp uge i64 %v, %value
  br i1 %ok, label %done, label %spin_next
spin_next:
  call void @fg_pause()
  %k = load i32, ptr %i
  %k1 = add i32 %k, 1
  store i32 %k1, ptr %i
  %more = icmp ult i32 %k1, {spin_wait}
  br i1 %more, label %spin, label %slow
slow:
  %dp = getelementptr i64, ptr %sig, i64 3
  %a = atomicrmw add ptr %dp, i64 1 seq_cst
  br label %loop
loop:
  %v2 = load atomic i64, ptr %sig seq_cst, align 8
  %ok2 = icmp uge i64 %v2, %value
  br i1 %ok2, label %leave, label %check
check:
  %st = load atomic i32, ptr %stop acquire, align 4
  %stopped = icmp ne i32 %st, 0
  br i1 %stopped, label %leave, label %sleep
sleep:
  %lo = trunc i64 %v2 to i32
  call void @fg_futex_wait(ptr %sig, i32 %lo, i64 {slice_ns})
  br label %loop
leave:
  %b = atomicrmw sub ptr %dp, i64 1 seq_cst
  br label %done
done:
  ret void
}

; publish commands up to %head; wake the worker if it sleeps and %wake is set. Returns
; whether the worker sleeps with the doorbell not rung (the host rings it later).
define i32 @fg_publish(ptr %ring, i64 %head, i32 %wake) #0 {
  store atomic i64 %head, ptr %ring seq_cst, align 8
  %dbp = getelementptr i64, ptr %ring, i64 2
  %a = atomicrmw add ptr %dbp, i32 1 seq_cst
  %sp = getelementptr i64, ptr %ring, i64 3
  %s = load atomic i32, ptr %sp seq_cst, align 4
  %asleep = icmp ne i32 %s, 0
  br i1 %asleep, label %check, label %awake
check:
  %ring_it = icmp ne i32 %wake, 0
  br i1 %ring_it, label %wake_up, label %unrung
wake_up:
  call void @fg_futex_wake(ptr %dbp, i32 1)
  br label %awake
unrung:
  ret i32 1
awake:
  ret i32 0
}

; copy %n slots from %src behind the published ones (the host checked there is room), then
; publish them: fg_publish's result
define i32 @fg_submit(ptr %ring, ptr %src, i64 %n, i32 %wake) #0 {
entry:
  %head = load atomic i64, ptr %ring monotonic, align 8
  %mp = getelementptr i64, ptr %ring, i64 5
  %mask = load i64, ptr %mp
  %bp = getelementptr i64, ptr %ring, i64 6
  %base = load ptr, ptr %bp
  %first = and i64 %head, %mask
  %cap = add i64 %mask, 1
  %room = sub i64 %cap, %first
  %wraps = icmp ugt i64 %n, %room
  %fit = select i1 %wraps, i64 %room, i64 %n
  %dst = getelementptr i8, ptr %base, i64 0
  %off = mul i64 %first, {slot_bytes}
  %at = getelementptr i8, ptr %base, i64 %off
  %len = mul i64 %fit, {slot_bytes}
  %c1 = call ptr @memcpy(ptr %at, ptr %src, i64 %len)
  br i1 %wraps, label %rest, label %publish
rest:
  %src2 = getelementptr i8, ptr %src, i64 %len
  %left = sub i64 %n, %fit
  %len2 = mul i64 %left, {slot_bytes}
  %c2 = call ptr @memcpy(ptr %dst, ptr %src2, i64 %len2)
  br label %publish
publish:
  %new = add i64 %head, %n
  %r = call i32 @fg_publish(ptr %ring, i64 %new, i32 %wake)
  ret i32 %r
}

; wake the worker whatever it does (commands published without waking it, or stop)
define void @fg_doorbell(ptr %ring) #0 {
  %dbp = getelementptr i64, ptr %ring, i64 2
  %a = atomicrmw add ptr %dbp, i32 1 seq_cst
  call void @fg_futex_wake(ptr %dbp, i32 1)
  ret void
}
"""

_POOL = """
; run slice %k of %slot as core %core; with a slice-time row, note its times there
define void @fg_timed_call(ptr %slot, i64 %k, i64 %row, i64 %core) #0 {
entry:
  %off = icmp eq i64 %row, 0
  br i1 %off, label %plain, label %timed
plain:
  call void @fg_call(ptr %slot, i64 %k)
  ret void
timed:
  %t0 = call i64 @fg_now()
  call void @fg_call(ptr %slot, i64 %k)
  %t1 = call i64 @fg_now()
  %keep = icmp ult i64 %k, {timed_slices}
  br i1 %keep, label %note, label %done
note:
  %base = inttoptr i64 %row to ptr
  %w = mul i64 %k, 4
  %p0 = getelementptr i64, ptr %base, i64 %w
  store i64 %k, ptr %p0
  %p1 = getelementptr i64, ptr %p0, i64 1
  store i64 %core, ptr %p1
  %p2 = getelementptr i64, ptr %p0, i64 2
  store i64 %t0, ptr %p2
  %p3 = getelementptr i64, ptr %p0, i64 3
  store i64 %t1, ptr %p3
  br label %done
done:
  ret void
}

; claim and run slices of generation %gen until none is left
define void @fg_pool_work(ptr %pool, i64 %gen, i64 %core) #0 {
entry:
  br label %loop
loop:
  %t = load atomic i64, ptr %pool acquire, align 8
  %tg = lshr i64 %t, 32
  %same = icmp eq i64 %tg, %gen
  br i1 %same, label %check, label %out
check:
  %next = and i64 %t, 65535
  %n0 = lshr i64 %t, 16
  %n = and i64 %n0, 65535
  %left = icmp ult i64 %next, %n
  br i1 %left, label %claim, label %out
claim:
  %t1 = add i64 %t, 1
  %r = cmpxchg ptr %pool, i64 %t, i64 %t1 acq_rel acquire
  %won = extractvalue { i64, i1 } %r, 1
  br i1 %won, label %run, label %loop
run:
  %jp = getelementptr i64, ptr %pool, i64 3
  %job = load atomic ptr, ptr %jp acquire, align 8
  %rp = getelementptr i64, ptr %pool, i64 6
  %row = load atomic i64, ptr %rp acquire, align 8
  call void @fg_timed_call(ptr %job, i64 %next, i64 %row, i64 %core)
  %dp = getelementptr i64, ptr %pool, i64 4
  %d = atomicrmw add ptr %dp, i32 1 acq_rel
  %d1 = add i32 %d, 1
  %n32 = trunc i64 %n to i32
  %last = icmp eq i32 %d1, %n32
  br i1 %last, label %wake, label %loop
wake:
  call void @fg_futex_wake(ptr %dp, i32 1)
  br label %loop
out:
  ret void
}

; the ring's worker runs %n slices of %slot with the pool's helpers
define void @fg_pool_run(ptr %pool, ptr %slot, i64 %n, i64 %row) #0 {
entry:
  %i = alloca i32
  store i32 0, ptr %i
  %rp = getelementptr i64, ptr %pool, i64 6
  store atomic i64 %row, ptr %rp release, align 8
  %gp = getelementptr i64, ptr %pool, i64 1
  %g = load atomic i32, ptr %gp monotonic, align 4
  %g1 = add i32 %g, 1
  %jp = getelementptr i64, ptr %pool, i64 3
  store atomic ptr %slot, ptr %jp release, align 8
  %dp = getelementptr i64, ptr %pool, i64 4
  store atomic i32 0, ptr %dp release, align 4
  %g64 = zext i32 %g1 to i64
  %hi = shl i64 %g64, 32
  %nn = shl i64 %n, 16
  %t = or i64 %hi, %nn
  store atomic i64 %t, ptr %pool seq_cst, align 8
  store atomic i32 %g1, ptr %gp seq_cst, align 4
  %sp = getelementptr i64, ptr %pool, i64 5
  %s = load atomic i32, ptr %sp seq_cst, align 4
  %asleep = icmp ne i32 %s, 0
  br i1 %asleep, label %wake, label %work
wake:
  call void @fg_futex_wake(ptr %gp, i32 2147483647)
  br label %work
work:
  call void @fg_pool_work(ptr %pool, i64 %g64, i64 0)
  %n32 = trunc i64 %n to i32
  br label %wait
wait:
  %d = load atomic i32, ptr %dp acquire, align 4
  %all = icmp eq i32 %d, %n32
  br i1 %all, label %done, label %spin
spin:
  %k = load i32, ptr %i
  %k1 = add i32 %k, 1
  store i32 %k1, ptr %i
  %more = icmp ult i32 %k1, {spin_wait}
  br i1 %more, label %pause, label %sleep
pause:
  call void @fg_pause()
  br label %wait
sleep:
  call void @fg_futex_wait(ptr %dp, i32 %d, i64 {slice_ns})
  br label %wait
done:
  ret void
}

; a helper thread: runs slices of every new generation until the pool stops
define void @fg_helper(ptr %pool) #0 {
entry:
  %seen = alloca i32
  %spins = alloca i32
  store i32 0, ptr %seen
  store i32 0, ptr %spins
  %gp = getelementptr i64, ptr %pool, i64 1
  %stp = getelementptr i64, ptr %pool, i64 2
  %sp = getelementptr i64, ptr %pool, i64 5
  %idp = getelementptr i64, ptr %pool, i64 7
  %id0 = atomicrmw add ptr %idp, i64 1 seq_cst
  %core = add i64 %id0, 1
  br label %loop
loop:
  %st = load atomic i32, ptr %stp acquire, align 4
  %stopped = icmp ne i32 %st, 0
  br i1 %stopped, label %out, label %look
look:
  %g = load atomic i32, ptr %gp acquire, align 4
  %old = load i32, ptr %seen
  %new = icmp ne i32 %g, %old
  br i1 %new, label %work, label %idle
work:
  store i32 %g, ptr %seen
  store i32 0, ptr %spins
  %g64 = zext i32 %g to i64
  call void @fg_pool_work(ptr %pool, i64 %g64, i64 %core)
  br label %loop
idle:
  %k = load i32, ptr %spins
  %k1 = add i32 %k, 1
  store i32 %k1, ptr %spins
  %more = icmp ult i32 %k1, {spin_worker}
  br i1 %more, label %pause, label %sleep
pause:
  call void @fg_pause()
  br label %loop
sleep:
  store i32 0, ptr %spins
  %a = atomicrmw add ptr %sp, i32 1 seq_cst
  %g2 = load atomic i32, ptr %gp seq_cst, align 4
  %st2 = load atomic i32, ptr %stp seq_cst, align 4
  %same = icmp eq i32 %g2, %old
  %run = icmp eq i32 %st2, 0
  %both = and i1 %same, %run
  br i1 %both, label %nap, label %woke
nap:
  call void @fg_futex_wait(ptr %gp, i32 %old, i64 {slice_ns})
  br label %woke
woke:
  %b = atomicrmw sub ptr %sp, i32 1 seq_cst
  br label %loop
out:
  ret void
}
"""

_WORKER = """
; run one slice %core of the kernel in %slot
define void @fg_call(ptr %slot, i64 %core) #0 {
  %fnp = getelementptr i64, ptr %slot, i64 1
  %fn = load ptr, ptr %fnp
  %cpp = getelementptr i64, ptr %slot, i64 4
  %pos = load i64, ptr %cpp
{args}
  call void %fn({arglist})
  ret void
}

define void @fg_exec(ptr %ring, ptr %slot) #0 {
entry:
  %i = alloca i64
  %np = getelementptr i64, ptr %slot, i64 3
  %n = load i64, ptr %np
  %split = icmp ugt i64 %n, 1
  br i1 %split, label %many, label %one
one:
  call void @fg_call(ptr %slot, i64 0)
  ret void
many:
  %tabp = getelementptr i64, ptr %ring, i64 10
  %tab = load atomic i64, ptr %tabp acquire, align 8
  %bp = getelementptr i64, ptr %ring, i64 6
  %base = load ptr, ptr %bp
  %sa = ptrtoint ptr %slot to i64
  %ba = ptrtoint ptr %base to i64
  %sd = sub i64 %sa, %ba
  %si = udiv i64 %sd, {slot_bytes}
  %ro = mul i64 %si, {row_bytes}
  %rw = add i64 %tab, %ro
  %on = icmp ne i64 %tab, 0
  %row = select i1 %on, i64 %rw, i64 0
  %pp = getelementptr i64, ptr %ring, i64 8
  %pool = load atomic ptr, ptr %pp acquire, align 8
  %nopool = icmp eq ptr %pool, null
  br i1 %nopool, label %serial, label %parallel
parallel:
  call void @fg_pool_run(ptr %pool, ptr %slot, i64 %n, i64 %row)
  ret void
serial:
  store i64 0, ptr %i
  br label %loop
loop:
  %k = load i64, ptr %i
  call void @fg_timed_call(ptr %slot, i64 %k, i64 %row, i64 0)
  %k1 = add i64 %k, 1
  store i64 %k1, ptr %i
  %more = icmp ult i64 %k1, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}

; run the command in %slot; returns the queue's new failed flag
define i32 @fg_run(ptr %ring, ptr %slot, i32 %failed) #0 {
entry:
  %kind = load i64, ptr %slot
  %ap = getelementptr i64, ptr %slot, i64 1
  %a = load i64, ptr %ap
  %aptr = inttoptr i64 %a to ptr
  %bp = getelementptr i64, ptr %slot, i64 2
  %b = load i64, ptr %bp
  %cp = getelementptr i64, ptr %slot, i64 3
  %c = load i64, ptr %cp
  %is_begin = icmp eq i64 %kind, 1
  br i1 %is_begin, label %begin, label %not_begin
begin:
  ret i32 0
not_begin:
  %is_signal = icmp eq i64 %kind, 4
  br i1 %is_signal, label %signal, label %not_signal
signal:
  call void @fg_signal_set(ptr %aptr, i64 %b)
  ret i32 %failed
not_signal:
  %is_wait = icmp eq i64 %kind, 5
  br i1 %is_wait, label %wait, label %not_wait
wait:
  %stop = getelementptr i64, ptr %ring, i64 4
  call void @fg_signal_wait(ptr %aptr, i64 %b, ptr %stop)
  ret i32 %failed
not_wait:
  %is_ts = icmp eq i64 %kind, 6
  br i1 %is_ts, label %timestamp, label %work
timestamp:
  %now = call i64 @fg_now()
  %tsp = getelementptr i64, ptr %aptr, i64 1
  store atomic i64 %now, ptr %tsp release, align 8
  ret i32 %failed
work:
  %skip = icmp ne i32 %failed, 0
  br i1 %skip, label %skipped, label %timed
skipped:
  ret i32 %failed
timed:
  %t0 = call i64 @fg_now()
  %t0p = getelementptr i64, ptr %slot, i64 5
  store i64 %t0, ptr %t0p
  %is_exec = icmp eq i64 %kind, 2
  br i1 %is_exec, label %exec, label %not_exec
exec:
  call void @fg_exec(ptr %ring, ptr %slot)
  br label %finish
not_exec:
  %is_copy = icmp eq i64 %kind, 3
  br i1 %is_copy, label %copy, label %callback
copy:
  %bptr = inttoptr i64 %b to ptr
  %m = call ptr @memcpy(ptr %aptr, ptr %bptr, i64 %c)
  br label %finish
callback:
  %cbp = getelementptr i64, ptr %ring, i64 7
  %cb = load ptr, ptr %cbp
  %res = call i32 %cb(i64 %c)
  br label %finish
finish:
  %f = phi i32 [0, %exec], [0, %copy], [%res, %callback]
  %t1 = call i64 @fg_now()
  %t1p = getelementptr i64, ptr %slot, i64 6
  store i64 %t1, ptr %t1p
  ret i32 %f
}

; wait (spin, then sleep on the doorbell) while no command follows %tail
define void @fg_idle(ptr %ring, i64 %tail) #0 {
entry:
  %i = alloca i32
  store i32 0, ptr %i
  %stp = getelementptr i64, ptr %ring, i64 4
  %dbp = getelementptr i64, ptr %ring, i64 2
  %slp = getelementptr i64, ptr %ring, i64 3
  br label %spin
spin:
  %h = load atomic i64, ptr %ring acquire, align 8
  %st = load atomic i32, ptr %stp acquire, align 4
  %busy = icmp ne i64 %h, %tail
  %stopped = icmp ne i32 %st, 0
  %go = or i1 %busy, %stopped
  br i1 %go, label %done, label %count
count:
  %k = load i32, ptr %i
  %k1 = add i32 %k, 1
  store i32 %k1, ptr %i
  %more = icmp ult i32 %k1, {spin_worker}
  br i1 %more, label %pause, label %sleep
pause:
  call void @fg_pause()
  br label %spin
sleep:
  store atomic i32 1, ptr %slp seq_cst, align 4
  %db = load atomic i32, ptr %dbp seq_cst, align 4
  %h2 = load atomic i64, ptr %ring seq_cst, align 8
  %st2 = load atomic i32, ptr %stp seq_cst, align 4
  %empty = icmp eq i64 %h2, %tail
  %run = icmp eq i32 %st2, 0
  %both = and i1 %empty, %run
  br i1 %both, label %nap, label %woke
nap:
  %np = getelementptr i64, ptr %ring, i64 9
  %ns = load i64, ptr %np
  call void @fg_futex_wait(ptr %dbp, i32 %db, i64 %ns)
  %ns2 = shl i64 %ns, 1
  %cap = icmp ugt i64 %ns2, {nap_max_ns}
  %ns3 = select i1 %cap, i64 {nap_max_ns}, i64 %ns2
  store i64 %ns3, ptr %np
  br label %woke
woke:
  store atomic i32 0, ptr %slp seq_cst, align 4
  br label %done
done:
  ret void
}

; the ring's thread: run published commands in order until stopped
define void @fg_worker(ptr %ring) #0 {
entry:
  %failed = alloca i32
  store i32 0, ptr %failed
  %stp = getelementptr i64, ptr %ring, i64 4
  %tp = getelementptr i64, ptr %ring, i64 1
  %mp = getelementptr i64, ptr %ring, i64 5
  %bp = getelementptr i64, ptr %ring, i64 6
  br label %loop
loop:
  %st = load atomic i32, ptr %stp acquire, align 4
  %stopped = icmp ne i32 %st, 0
  br i1 %stopped, label %out, label %look
look:
  %tail = load atomic i64, ptr %tp monotonic, align 8
  %head = load atomic i64, ptr %ring acquire, align 8
  %empty = icmp eq i64 %tail, %head
  br i1 %empty, label %idle, label %run
idle:
  call void @fg_idle(ptr %ring, i64 %tail)
  br label %loop
run:
  %mask = load i64, ptr %mp
  %base = load ptr, ptr %bp
  %idx = and i64 %tail, %mask
  %off = mul i64 %idx, {slot_bytes}
  %slot = getelementptr i8, ptr %base, i64 %off
  %np = getelementptr i64, ptr %ring, i64 9
  store i64 {nap_min_ns}, ptr %np
  %f = load i32, ptr %failed
  %f2 = call i32 @fg_run(ptr %ring, ptr %slot, i32 %f)
  store i32 %f2, ptr %failed
  %t1 = add i64 %tail, 1
  store atomic i64 %t1, ptr %tp release, align 8
  br label %loop
out:
  ret void
}

attributes #0 = { nounwind "no-jump-tables"="true" }
"""


def _call_args() -> tuple[str, str]:
    lines, names = [], []
    for k in range(MAX_ARGS):
        lines += [
            f"  %p{k} = getelementptr i64, ptr %slot, i64 {ARG_WORD + k}",
            f"  %v{k} = load i64, ptr %p{k}",
            f"  %c{k} = icmp eq i64 %pos, {k}",
            f"  %a{k} = select i1 %c{k}, i64 %core, i64 %v{k}",
        ]
        names.append(f"i64 %a{k}")
    return "\n".join(lines), ", ".join(names)


def worker_ir(machine: str | None = None) -> str | None:
    """The LLVM IR module of the worker loop for this machine (None: unsupported CPU)."""
    arch = machine or platform.machine()
    if arch not in _PAUSE:
        return None
    args, arglist = _call_args()
    subst = {
        "{futex}": str(_FUTEX[arch]),
        "{pause_decl}": _PAUSE[arch][0],
        "{pause}": _PAUSE[arch][1],
        "{spin_wait}": str(SPIN_WAIT),
        "{spin_worker}": str(SPIN_WORKER),
        "{slice_ns}": str(SLICE_NS),
        "{nap_min_ns}": str(NAP_MIN_NS),
        "{nap_max_ns}": str(NAP_MAX_NS),
        "{slot_bytes}": str(SLOT_BYTES),
        "{timed_slices}": str(TIMED_SLICES),
        "{row_bytes}": str(TIMED_SLICES * 32),
        "{args}": args,
        "{arglist}": arglist,
    }
    text = _HELPERS + _POOL + _WORKER
    for key, value in subst.items():
        text = text.replace(key, value)
    return "; fusegrad HCQ worker loop\n" + text
