#!/usr/bin/env python3
"""Write the API fuzzer's seed corpus (tests/fuzz/corpus/): small inputs that each walk one
area of the library through fuzz_driver.c's operations, so that libFuzzer starts from inputs
that already reach deep paths. Run it again after changing the driver's input format:

    python3 tests/fuzz/make_seeds.py

The byte layout of each operation is the one fuzz_driver.c reads (opcode % 20, then its
argument bytes; opcodes 141, 161, ... 241 are the memory-space operations of memspace.h);
byte 0 of an input chooses the threads (1 + b % 3), small devices (0x40), device 1 without
memory pools (0x20), without concurrent managed access (0x08) or without managed memory
(0x04), and the synchronous debug mode (0x80, one thread).
"""
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus")


def u16(v):
    return [v & 0xFF, (v >> 8) & 0xFF]


def rng(mode=0, a=0, b=0xFFFF):
    """pick_range: mode % 8 == 7 out of range, 6 to the end, else offset a % size, length b."""
    return [mode] + u16(a) + u16(b)


def buf_create(dev=0, size_class=2, sz=256, slot=0, on_stream=False, label=False):
    v = (dev & 3) | ((size_class & 7) << 2) | (0x40 if on_stream else 0) | (0x80 if label else 0)
    return [0, v] + u16(sz) + [slot | (1 if on_stream else 0)]


def buf_destroy(slot=0, how=0):
    return [2, slot, how]


def h2d(slot=0, stream=0, r=None, pinned=False):
    return [3, slot | (0x80 if pinned else 0), stream] + (r or rng(6, 0))


def d2h(slot=0, stream=0, r=None, pinned=False):
    return [4, slot | (0x80 if pinned else 0), stream] + (r or rng(6, 0))


def pinned(slot=0, host=0, stream=0, to_device=True, rb=None, rh=None):
    return [5, (slot << 1) | (1 if to_device else 0), stream, host] + (rb or rng(6)) + (rh or rng(6))


def d2d(dst=0, src=1, stream=0, rd=None, rs=None):
    return [6, dst, src, stream] + (rd or rng(0, 0, 64)) + (rs or rng(0, 0, 64))


def set_fill(slot=0, stream=0, val=7, pv=0x42, fill=False, r=None):
    v = slot * 2 + (0 if fill else 1)
    return [7, v, stream, val, pv] + (r or rng(6, 0))


def host(slot=0, sz=512, fl=0):
    return [8, slot] + u16(sz) + [fl]


def stream(slot=0, w=0, wrap=False):
    return [9, slot | (0x80 if wrap else 0), w]


def stream_use(slot=0, what=0):
    return [10, slot, what]


def event(slot=0, w=0, x=0):
    return [11, slot, w, x]


def timer(slot=0, w=0):
    return [12, slot, w]


def graph(v=0, w=0):
    return [13, v, w]


def launch(slot=0, stream=0, gx=2, bx=127, misc=0, nb=0, val=3):
    return [14, slot, stream, gx] + u16(bx) + [misc] + u16(nb) + [val]


def pool(dev=0, what=0, x=0):
    return [15, dev, what] + u16(x)


def close(own=0):
    return [136, own]  # 136 % 20 == 16, with bit 0x80


def vector_copy(out=0, x=1, stream=0, n=16, ob=0, xb=0):
    return [16, out, x, stream] + u16(n) + u16(ob) + u16(xb)


def set_op(v=1, w=0, x=0):
    return [137, v, w] + u16(x)  # 137 % 20 == 17, with bit 0x80


def rank_comm(v=0, w=0):
    return [17, v, w]


def misuse(v=0, w=0):
    return [18, v, w]


def arm(mode=0, a=0, b=0):
    return [19, mode, a, b]


def member_arm(index, skip=0, err=0, always=False):
    """Fail table entry `index` (its position in calls.h) after `skip` calls."""
    return arm(1 | ((skip & 3) << 1) | (0x80 if always else 0), index, err)


# memspace.h: opcodes 141 + 20 k (op % 20 == 1 with bit 0x80; op % 20 == 1 without it is a
# buffer create, as 0 is)
F_U8, F_U16X2, F_F32, F_F32X4 = 1, 8, 22, 24


def image(slot=0, dev=0, array=False, surface=False, fmt=F_F32, w=20, h=10, bad=None,
          destroy_only=False):
    """A pitched buffer (or an array) in slot; a taken slot is destroyed first (only that with
    destroy_only). bad: 0 .. 7 picks an invalid (or huge) variant."""
    v = slot | (dev << 2) | (0x10 if array else 0) | (0x20 if surface else 0) | \
        (0x40 if bad is not None else 0) | (0x80 if destroy_only else 0)
    f = (fmt - 1) | ((bad or 0) << 5) if bad is not None else (fmt - 1)
    return [141, v] + u16(max(w - 1, 0)) + [max(h - 1, 0), f]


def managed(slot=0, what=0, stream=0, x=0, r=None, dev=0, size_class=2, sz=3000, label=False):
    """A free slot: create (dev, size_class 0 empty, 1 < 64, 2 < 8192, 3 128 KiB..1 MiB); a
    taken one: what 0 destroy, 1 from host, 2 to host, 3 prefetch, 4 advise, 5 info. x: the
    location of a prefetch (x % 8), the advice (x % 8) and its location (x >> 3) % 8 (0 host,
    1 device 0, 2 device 1, 6 and 7 invalid); x & 15 == 15 a NULL host pointer."""
    if r is None and what != 0:
        r = rng(6, 0)
    w = what | ((size_class & 3) << 3) | (1 if label else 0)
    body = [161, slot | (dev << 2), stream, w, x]
    return body + (r if r is not None else u16(sz))


def copy2d(dst_host=False, src_host=False, dst=0, src=0, stream=0, width=8, height=4,
           corners=(0, 0, 0, 0), pitch=0, host_kind=0, fit=True, stale_side=None,
           bad_place=False):
    """cm_copy_2d: pitch 0 packed, 1 padded, 2 padded more, 3 short; host_kind 0 pageable,
    2 managed, 3 device memory (NULL with pitch bit 0x40)."""
    v = (1 if dst_host else 0) | (2 if src_host else 0) | (host_kind << 2) | \
        (0x30 if bad_place else 0) | \
        ((0x80 | (stale_side << 6)) if stale_side is not None else 0)
    p = pitch | (0 if fit else 0x80)
    return [181, v, dst | (src << 2), stream, p, width, height] + list(corners)


def view(slot=0, kind=0, d1=0x40, d2=6, r=0, ob=0, lb=0xFFFF, null_desc=False, stale=False):
    """A texture (kind 0 buffer, 1 pitched, 2 array) or surface (3) in a free slot; a taken
    slot is destroyed. d1: address | filter << 2 | read << 3 | normalized << 4 (0x40 alone:
    every default, 0x80: a field outside its enum); d2 & 4: the memory's format (buffers:
    format 1 + (d2 >> 3) % 24)."""
    v = slot | (kind << 2) | (0x40 if null_desc else 0) | (0x80 if stale else 0)
    return [201, v, d1, d2, r] + u16(ob) + u16(lb)


def symbol(what=0, dev=0, stream=0, r=None, misuse=0):
    """what 0-3 write the thread's symbol, 4-6 read it, 7 its address; misuse 5 NULL symbol,
    6 not a symbol, 7 NULL host memory."""
    return [221, dev | (what << 2) | (misuse << 5), stream] + (r or rng(0, 0, 16))


def ms_misuse(v=0, w=0):
    """v % 6: 0 stale, 1 another kind, 2 never a handle, 3 NULL arguments, 4 destroy(NULL),
    5 images read back whole (w: which slots)."""
    return [241, v, w]


SEEDS = {}

SEEDS["buffer_roundtrip"] = [0] + buf_create(0, 2, 300) + h2d(0) + d2h(0) + buf_destroy(0)
SEEDS["buffer_sizes"] = [0] + buf_create(0, 0, 0, 0) + buf_create(1, 1, 17, 1) + \
    buf_create(2, 6, 5000, 2) + buf_create(3, 3, 999, 3) + h2d(2) + d2h(2) + d2h(1) + \
    buf_destroy(0) + buf_destroy(1)
SEEDS["stream_copies"] = [0] + stream(0, 0) + buf_create(0, 2, 512) + h2d(0, 1) + d2h(0, 1) + \
    stream_use(0, 0) + stream_use(0, 1) + stream(0)
SEEDS["stream_ordered"] = [0] + stream(0, 0) + buf_create(0, 2, 1024, 0, True) + h2d(0, 1) + \
    d2h(0) + buf_destroy(0, 1) + stream(0)
SEEDS["pinned"] = [0] + host(0, 600, 0) + buf_create(0, 2, 700) + pinned(0, 0, 0, True) + \
    pinned(0, 0, 0, False) + h2d(0, 5, pinned=True) + d2h(0, 5, pinned=True)
SEEDS["registered"] = [0] + host(0, 900, 1) + host(1, 300, 3) + buf_create(0, 2, 1000) + \
    pinned(0, 0, 0, True) + pinned(0, 1, 0, False) + host(0 | 0x80) + host(1 | 0x80)
SEEDS["peer_copies"] = [0] + buf_create(0, 2, 400, 0) + buf_create(1, 2, 400, 1) + h2d(1) + \
    d2d(0, 1) + d2h(0) + stream(0, 0) + d2d(0, 1, 1) + d2h(0)
SEEDS["set_fill"] = [0] + buf_create(0, 2, 256) + set_fill(0, 0, 9) + \
    set_fill(0, 0, 1, 0x42, True) + set_fill(0, 0, 2, 0x43, True) + set_fill(0, 0, 3, 0x41, True) + \
    d2h(0) + set_fill(0, 0, 300 & 0xFF, 0x42, False)
SEEDS["launch"] = [0] + buf_create(0, 2, 900) + set_fill(0, 0, 1) + launch(0, 0, 3, 255) + \
    d2h(0) + stream(0, 0) + launch(0, 1, 2, 511, 0x01) + stream_use(0, 0) + d2h(0)
SEEDS["launch_invalid"] = [0] + buf_create(0, 2, 900) + launch(0, 0, 2, 1300) + \
    launch(0, 0, 2, 300, 0x10) + launch(0, 0, 3, 100, 0x60) + launch(0, 0, 0, 100) + \
    launch(0, 0, 2, 0, 0x80) + d2h(0)
SEEDS["events"] = [0] + stream(0, 0) + event(0, 4) + event(1, 4) + event(0, 1, 0) + \
    event(1, 1, 0) + event(0, 3) + event(0, 4) + event(0, 5, 1 << 3) + event(0, 2) + event(0, 0)
SEEDS["timers"] = [0] + stream(0, 0) + timer(0, 0) + timer(0, 0) + timer(0, 1) + timer(0, 2) + \
    timer(0, 3) + timer(1, 0) + timer(1, 1)
SEEDS["graph"] = [0] + stream(0, 0) + buf_create(0, 2, 128) + graph(0, 0) + set_fill(0, 1, 5) + \
    launch(0, 1, 1, 127) + graph(1, 0) + graph(2, 0) + graph(1, 0) + stream_use(0, 0) + d2h(0) + \
    graph(3, 0)
SEEDS["graph_invalidated"] = [0] + stream(0, 0) + buf_create(0, 2, 128) + graph(0, 0) + \
    h2d(0, 1) + d2h(0) + graph(1, 1) + stream(0)
SEEDS["host_callbacks"] = [0] + stream(0, 0) + stream(1, 0) + stream_use(0, 3) + \
    stream_use(0, 2 | (1 << 3)) + stream_use(1, 4) + stream(0) + stream(1)
SEEDS["wrap"] = [0] + stream(0, 0, True) + stream(1, 0x40, True) + stream(2, 0x20, True) + \
    buf_create(0, 2, 64) + h2d(0, 1) + stream(0)
SEEDS["own_device_close"] = [0] + buf_create(2, 2, 64) + close(0) + buf_destroy(0) + close(0) + \
    buf_create(2, 2, 64) + stream(0, 2) + close(0) + stream(0) + buf_destroy(0) + close(0)
SEEDS["pools"] = [0] + stream(0, 0) + buf_create(0, 2, 2000, 0, True) + buf_destroy(0) + \
    pool(0, 0, 16) + pool(0, 1, 0) + pool(0, 2) + pool(2, 2) + pool(0, 3) + pool(0, 5) + \
    pool(2, 4, 0x11) + pool(0, 7) + stream(0)
SEEDS["staging"] = [0] + pool(2, 6, 0x1 | (0x3 << 2) | (0x2 << 4) | (0x1 << 6)) + \
    buf_create(2, 6, 4000, 0) + h2d(0) + d2h(0) + pool(2, 6, 0x3) + h2d(0) + \
    stream(0, 2) + h2d(0, 1) + d2h(0, 1)
SEEDS["vector_copy"] = [0] + buf_create(0, 2, 400, 0) + buf_create(0, 2, 400, 1) + h2d(1) + \
    vector_copy(0, 1, 0, 64) + d2h(0) + vector_copy(0, 0, 0, 16, 0, 4) + vector_copy(0, 1, 0, 8) + \
    d2h(0)
SEEDS["device_set"] = [0] + set_op(1) + set_op(1, 3) + set_op(1, 4, 300) + set_op(1, 5) + \
    set_op(1, 7, 1) + set_op(1, 4) + set_op(1, 0)
SEEDS["collectives"] = [0] + set_op(1) + set_op(1, 1) + set_op(1, 2, 16) + \
    set_op(1, 2, 16 | (1 << 6)) + set_op(1, 2, 16 | (2 << 6)) + set_op(1, 2, 0x8000) + \
    set_op(1, 0) + set_op(1, 1) + set_op(1, 0)
SEEDS["rank_comm"] = [0] + rank_comm(0, 0) + rank_comm(0, 2) + rank_comm(0, 1) + \
    rank_comm(2, 0x80) + rank_comm(2, 0) + close(0) + rank_comm(0, 1) + close(0)
SEEDS["misuse"] = [0] + buf_create(0, 2, 64) + buf_destroy(0) + misuse(0, 0) + misuse(1, 0) + \
    stream(0, 0) + misuse(1, 0) + misuse(2, 1) + misuse(2, 4) + misuse(0x80, 0) + stream(0)
SEEDS["ranges"] = [0] + buf_create(0, 2, 100) + h2d(0, 0, rng(7, 50, 60)) + d2h(0, 0, rng(15, 1, 0)) + \
    set_fill(0, 0, 1, 0x42, False, rng(7, 90, 20)) + d2d(0, 0, 0, rng(0, 0, 50), rng(0, 10, 50))
SEEDS["fault_any"] = [0] + arm(0, 0) + buf_create(0, 2, 64) + arm(0, 3) + h2d(0) + arm(0, 1) + \
    stream(0, 0) + arm(0, 2, 4) + d2h(0) + stream(0)
SEEDS["fault_malloc"] = [0] + member_arm(20) + buf_create(0, 2, 64) + buf_create(0, 2, 64) + \
    member_arm(21) + buf_destroy(0)
SEEDS["fault_graph"] = [0] + stream(0, 0) + buf_create(0, 2, 64) + graph(0, 0) + \
    set_fill(0, 1, 3) + member_arm(61) + graph(1, 0) + graph(0, 0) + graph(1, 0) + stream(0)
SEEDS["fault_sticky"] = [0] + buf_create(0, 2, 64) + arm(0, 0xF0, 13) + h2d(0) + d2h(0) + \
    buf_destroy(0) + stream(0, 0) + stream(0)
SEEDS["oom"] = [0x40] + buf_create(0, 7, 7, 0) + buf_create(0, 7, 7, 1) + buf_create(0, 7, 7, 2) + \
    stream(0, 0) + buf_create(0, 7, 3, 3, True) + buf_destroy(0) + buf_create(0, 7, 7, 4)
SEEDS["sync_mode"] = [0x80] + buf_create(0, 2, 300) + launch(0, 0, 2, 255) + stream(0, 0) + \
    launch(0, 1, 2, 255) + d2h(0)
SEEDS["no_pools"] = [0x20] + stream(0, 1) + buf_create(1, 2, 64, 0, True) + buf_create(1, 2, 64, 1) + \
    pool(1, 0) + pool(1, 1) + stream(0)

SEEDS["ms_pitched"] = [0] + image(0, 0, fmt=F_F32, w=20, h=10) + \
    copy2d(src_host=True, dst=0, width=16, height=8, corners=(2, 1, 0, 0)) + \
    copy2d(dst_host=True, src=0, width=20, height=10, pitch=1 | (3 << 2)) + \
    view(0, 1, d2=6) + image(0, destroy_only=True) + ms_misuse(5, 0xF) + view(0) + \
    image(0, destroy_only=True) + ms_misuse(0, 0) + ms_misuse(0x80, 0)
SEEDS["ms_array"] = [0] + image(1, 0, array=True, surface=True, fmt=F_U8, w=40, h=12) + \
    image(2, 0, fmt=F_U8, w=40, h=12) + image(3, 0, array=True, fmt=F_U8, w=8, h=8) + \
    copy2d(src_host=True, dst=1, width=30, height=10, corners=(5, 2, 0, 0), pitch=2) + \
    copy2d(dst=2, src=1, width=40, height=12) + \
    copy2d(dst_host=True, src=2, width=40, height=12) + \
    copy2d(dst=3, src=1, width=4, height=4) + view(0, 3, r=1) + view(1, 2, d1=4 | 8, r=1) + \
    view(2, 2, d1=1, r=1) + view(3, 3, r=3) + image(1, destroy_only=True) + view(0) + \
    view(1) + image(1, destroy_only=True) + ms_misuse(5, 0xF)
SEEDS["ms_texture_rules"] = [0] + image(0, 0, fmt=F_U16X2, w=33, h=7) + \
    image(1, 0, array=True, fmt=F_F32X4, w=9, h=9) + view(0, 1, d1=0x04) + \
    view(0, 1, d1=0x04 | 0x08) + view(1, 1, d1=0x01 | 0x10) + view(2, 2, d1=0x02) + \
    view(3, 2, d1=0x80 | 0x20) + view(3, 2, d1=0x1C) + view(3, 1, d2=(3 << 3)) + \
    view(3, 1, null_desc=True) + view(2, 2, null_desc=True) + image(0, destroy_only=True) + \
    image(1, destroy_only=True) + view(0) + view(1) + view(2) + view(3) + \
    image(0, destroy_only=True) + image(1, destroy_only=True)
SEEDS["ms_buffer_texture"] = [0] + buf_create(0, 2, 3000) + h2d(0) + \
    view(0, 0, d2=(21 << 3) | 4, ob=1, lb=1024) + buf_destroy(0) + \
    view(1, 0, d2=(21 << 3) | 4, r=0x80, ob=3, lb=64) + \
    view(1, 0, d2=(21 << 3) | 4, r=0x20, lb=7) + \
    view(1, 0, d1=0x04, d2=(21 << 3) | 4) + view(1, 0, d2=0) + view(1, 0, null_desc=True) + \
    stream(0, 0) + buf_destroy(0, 1) + view(0) + buf_destroy(0) + view(2, 0, stale=True) + \
    stream(0)
SEEDS["ms_bad_images"] = [0] + \
    [x for k in range(16) for x in image(k % 4, (k // 4) % 4, array=bool(k & 1), bad=k % 8)]
SEEDS["ms_managed"] = [0] + managed(0, dev=0, size_class=2, sz=3000) + managed(0, 1) + \
    managed(0, 2) + managed(0, 1, r=rng(0, 100, 200)) + managed(0, 2, stream=0) + \
    managed(0, 3, x=0) + managed(0, 3, x=1) + managed(0, 3, x=2) + managed(0, 3, x=6) + \
    managed(0, 4, x=1) + managed(0, 4, x=3 | (1 << 3)) + managed(0, 4, x=5 | (2 << 3)) + \
    managed(0, 4, x=6 | (7 << 3)) + managed(0, 4, x=0) + managed(0, 5) + \
    managed(0, 1, x=15) + managed(0, 2, r=rng(7, 10, 9000)) + managed(1, dev=1, size_class=0) + \
    managed(1, 1) + managed(2, dev=1, size_class=3, sz=7) + stream(0, 0) + \
    managed(0, 1, stream=1) + managed(0, 3, stream=1, x=1) + managed(0, 0) + managed(1, 0)
SEEDS["ms_managed_limits"] = [0x0C] + managed(0, dev=1) + managed(1, dev=0) + \
    managed(1, 3, x=2) + managed(1, 3, x=0) + managed(1, 4, x=3 | (2 << 3)) + \
    managed(1, 4, x=3 | (1 << 3))
SEEDS["ms_managed_no_concurrent"] = [0x08] + managed(0, dev=1) + managed(0, 3, x=0) + \
    managed(0, 4, x=5 | (1 << 3)) + managed(0, 1) + managed(0, 2) + managed(1, dev=0) + \
    managed(1, 3, x=2) + managed(1, 4, x=5 | (2 << 3)) + managed(1, 4, x=6 | (2 << 3))
SEEDS["ms_symbols"] = [0] + symbol(0, 0, r=rng(0, 0, 64)) + symbol(4, 0, r=rng(0, 0, 64)) + \
    symbol(1, 1, r=rng(0, 10, 20)) + symbol(5, 1, r=rng(6, 30)) + symbol(7, 0) + symbol(7, 1) + \
    symbol(2, 0, r=rng(7, 60, 10)) + symbol(6, 0, r=rng(15, 1, 0)) + symbol(0, 0, misuse=5) + \
    symbol(4, 1, misuse=6) + symbol(1, 0, misuse=7) + symbol(7, 0, misuse=6) + stream(0, 1) + \
    symbol(0, 1, stream=1) + symbol(4, 0, stream=1) + symbol(4, 1, stream=1) + stream(0)
SEEDS["ms_capture"] = [0] + stream(0, 0) + image(0, 0, fmt=F_U8, w=32, h=4) + \
    managed(0, dev=0, size_class=2, sz=512) + graph(0, 0) + \
    copy2d(src_host=True, dst=0, stream=1, width=32, height=4) + managed(0, 1, stream=1) + \
    symbol(0, 0, stream=1) + copy2d(dst_host=True, src=0, stream=1, width=8, height=2) + \
    image(1, 0, fmt=F_U8) + managed(0, 0) + graph(1, 0) + graph(1, 0) + stream_use(0, 0) + \
    ms_misuse(5, 0xF) + managed(0, 2) + symbol(4, 0) + image(0, destroy_only=True) + stream(0)
SEEDS["ms_copy_rules"] = [0] + image(0, 0, fmt=F_U8, w=16, h=16) + image(1, 1, fmt=F_U8) + \
    image(2, 0, fmt=F_F32, w=16, h=16) + managed(0, dev=0, size_class=2, sz=4000) + \
    copy2d(dst=0, src=1) + copy2d(dst=0, src=2) + copy2d(dst_host=True, src_host=True) + \
    copy2d(src_host=True, dst=0, width=20, height=4, fit=False) + \
    copy2d(src_host=True, dst=0, width=8, height=4, pitch=3) + \
    copy2d(src_host=True, dst=0, host_kind=3) + \
    copy2d(dst_host=True, src=0, host_kind=3, pitch=0x40) + \
    copy2d(src_host=True, dst=0, width=0, height=3, host_kind=3, pitch=0x40) + \
    copy2d(src_host=True, dst=0, host_kind=2, width=16, height=8, pitch=1) + \
    copy2d(dst_host=True, src=0, host_kind=2, width=16, height=16) + \
    copy2d(dst=0, src=0, width=8, height=8, corners=(0, 0, 4, 4)) + \
    copy2d(src_host=True, dst=0, bad_place=True) + stream(0, 1) + \
    copy2d(src_host=True, dst=0, stream=1) + image(0, destroy_only=True) + \
    copy2d(src_host=True, dst=0, stale_side=0) + ms_misuse(5, 0xF)
SEEDS["ms_misuse"] = [0] + image(0, 0) + image(1, 0, array=True, surface=True) + managed(0) + \
    buf_create(0, 2, 1024) + view(0, 3, r=1) + view(1, 1) + \
    [x for v in range(6) for w in (0, 1, 2, 3, 4, 9, 0x80)
     for x in ms_misuse(v | (w & 0x80), w & 0x7F)] + \
    image(0, destroy_only=True) + image(1, destroy_only=True) + managed(0, 0) + \
    view(0) + view(1) + ms_misuse(0, 0) + ms_misuse(0x80, 1) + ms_misuse(0x80, 2) + \
    ms_misuse(0x80, 3) + ms_misuse(0x80, 4) + misuse(0, 0) + misuse(0x80, 3) + misuse(0x80, 5)
SEEDS["ms_own_device"] = [0] + image(0, 2, fmt=F_U8) + managed(0, dev=2) + close(0) + \
    image(0, destroy_only=True) + close(0) + managed(0, 0) + close(0) + image(1, 2, array=True) + \
    view(0, 2) + image(1, destroy_only=True) + close(0) + view(0) + image(1, destroy_only=True) + \
    close(0) + ms_misuse(3, 0)
SEEDS["ms_faults"] = [0] + member_arm(48) + image(0, 0) + image(0, 0) + member_arm(49) + \
    image(1, 0, array=True) + image(1, 0, array=True) + member_arm(53) + view(0, 1) + \
    view(0, 1) + member_arm(57) + managed(0) + managed(0) + member_arm(58) + \
    managed(0, 3, x=1) + member_arm(59) + managed(0, 4, x=1) + member_arm(39) + \
    copy2d(src_host=True, dst=0) + member_arm(51) + copy2d(src_host=True, dst=1) + \
    member_arm(52) + copy2d(dst_host=True, src=1) + member_arm(46) + symbol(0, 0) + \
    member_arm(47) + symbol(4, 0) + member_arm(44) + symbol(7, 0) + arm(0, 2) + \
    copy2d(dst_host=True, src=0) + member_arm(54) + view(0) + member_arm(50) + \
    image(1, destroy_only=True) + member_arm(21) + image(0, destroy_only=True) + \
    member_arm(21) + managed(0, 0)

random.seed(17)
for n in range(8):
    threads = 1 + n % 3
    head = (threads - 1) | (random.randrange(0, 2) << 6)
    body = []
    for _ in range(40):
        op = random.choice([buf_create(random.randrange(4), 2, random.randrange(4096), random.randrange(8)),
                            h2d(random.randrange(8), random.randrange(8)),
                            d2h(random.randrange(8), random.randrange(8)),
                            stream(random.randrange(6), random.randrange(4)),
                            event(random.randrange(6), random.randrange(256), random.randrange(256)),
                            launch(random.randrange(8), random.randrange(8), 2, 255),
                            set_fill(random.randrange(8), random.randrange(8), 5),
                            arm(0, random.randrange(24)), misuse(random.randrange(3), 1)])
        body += op
    # with threads, operations are dealt in 12-byte slices: pad each to 12
    if threads > 1:
        padded = []
        i = 0
        for op in [body[i:i + 12] for i in range(0, len(body), 12)]:
            padded += op + [0] * (12 - len(op))
        body = padded
    SEEDS["random_%d_threads_%d" % (n, threads)] = [head] + body

os.makedirs(OUT, exist_ok=True)
for name, data in sorted(SEEDS.items()):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(bytes(b & 0xFF for b in data))
print("wrote %d seeds to %s" % (len(SEEDS), OUT))
