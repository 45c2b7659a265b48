; fusegrad kernel bitcast_from_bfloat16
define void @bitcast_from_bfloat16(ptr noalias %buf0, ptr noalias %buf1, ptr noalias %buf2, ptr noalias %buf3) #0 {
entry:
  br label %loop2
loop2:
  %v2 = phi i32 [ 0, %entry ], [ %v2.next, %loop2.latch ]
  %v2.more = icmp slt i32 %v2, 48
  br i1 %v2.more, label %loop2.body, label %loop2.exit
loop2.body:
  %v3 = getelementptr inbounds i16, ptr %buf0, i32 %v2
  %v4.mem = load i16, ptr %v3, align 2
  %v4.w = zext i16 %v4.mem to i32
  %v4.s = shl i32 %v4.w, 16
  %v4 = bitcast i32 %v4.s to float
  %v6 = getelementptr inbounds i16, ptr %buf1, i32 %v2
  %v7.bits.b = bitcast float %v4 to i32
  %v7.bits.h = lshr i32 %v7.bits.b, 16
  %v7.bits.odd = and i32 %v7.bits.h, 1
  %v7.bits.r = add i32 %v7.bits.b, 32767
  %v7.bits.r2 = add i32 %v7.bits.r, %v7.bits.odd
  %v7.bits.hi = lshr i32 %v7.bits.r2, 16
  %v7.bits.sg = and i32 %v7.bits.h, 32768
  %v7.bits.qn = or i32 %v7.bits.sg, 32704
  %v7.bits.nan = fcmp uno float %v4, %v4
  %v7.bits.sel = select i1 %v7.bits.nan, i32 %v7.bits.qn, i32 %v7.bits.hi
  %v7.bits = trunc i32 %v7.bits.sel to i16
  store i16 %v7.bits, ptr %v6, align 2
  %v10 = getelementptr inbounds i16, ptr %buf2, i32 %v2
  %v11.bits.b = bitcast float %v4 to i32
  %v11.bits.h = lshr i32 %v11.bits.b, 16
  %v11.bits.odd = and i32 %v11.bits.h, 1
  %v11.bits.r = add i32 %v11.bits.b, 32767
  %v11.bits.r2 = add i32 %v11.bits.r, %v11.bits.odd
  %v11.bits.hi = lshr i32 %v11.bits.r2, 16
  %v11.bits.sg = and i32 %v11.bits.h, 32768
  %v11.bits.qn = or i32 %v11.bits.sg, 32704
  %v11.bits.nan = fcmp uno float %v4, %v4
  %v11.bits.sel = select i1 %v11.bits.nan, i32 %v11.bits.qn, i32 %v11.bits.hi
  %v11.bits = trunc i32 %v11.bits.sel to i16
  store i16 %v11.bits, ptr %v10, align 2
  %v14 = getelementptr inbounds i16, ptr %buf3, i32 %v2
  %v15.bits.b = bitcast float %v4 to i32
  %v15.bits.h = lshr i32 %v15.bits.b, 16
  %v15.bits.odd = and i32 %v15.bits.h, 1
  %v15.bits.r = add i32 %v15.bits.b, 32767
  %v15.bits.r2 = add i32 %v15.bits.r, %v15.bits.odd
  %v15.bits.hi = lshr i32 %v15.bits.r2, 16
  %v15.bits.sg = and i32 %v15.bits.h, 32768
  %v15.bits.qn = or i32 %v15.bits.sg, 32704
  %v15.bits.nan = fcmp uno float %v4, %v4
  %v15.bits.sel = select i1 %v15.bits.nan, i32 %v15.bits.qn, i32 %v15.bits.hi
  %v15.bits = trunc i32 %v15.bits.sel to i16
  %v15.w = zext i16 %v15.bits to i32
  %v15.a = and i32 %v15.w, 32767
  %v15.sg = and i32 %v15.w, 32768
  %v15.sg2 = shl i32 %v15.sg, 16
  %v15.sh = shl i32 %v15.a, 13
  %v15.nrm = add i32 %v15.sh, 939524096
  %v15.inf = or i32 %v15.sh, 2139095040
  %v15.ex = lshr i32 %v15.a, 10
  %v15.sf = uitofp i32 %v15.a to float
  %v15.sm = fmul float %v15.sf, 0x3E70000000000000
  %v15.sb = bitcast float %v15.sm to i32
  %v15.isz = icmp eq i32 %v15.ex, 0
  %v15.isi = icmp eq i32 %v15.ex, 31
  %v15.t = select i1 %v15.isi, i32 %v15.inf, i32 %v15.nrm
  %v15.t2 = select i1 %v15.isz, i32 %v15.sb, i32 %v15.t
  %v15.o = or i32 %v15.t2, %v15.sg2
  %v15 = bitcast i32 %v15.o to float
  %v16.h.b = bitcast float %v15 to i32
  %v16.h.a = and i32 %v16.h.b, 2147483647
  %v16.h.sg = lshr i32 %v16.h.b, 16
  %v16.h.sg2 = and i32 %v16.h.sg, 32768
  %v16.h.m = sub i32 %v16.h.a, 939524096
  %v16.h.h0 = lshr i32 %v16.h.m, 13
  %v16.h.odd = and i32 %v16.h.h0, 1
  %v16.h.r = add i32 %v16.h.m, 4095
  %v16.h.r2 = add i32 %v16.h.r, %v16.h.odd
  %v16.h.h = lshr i32 %v16.h.r2, 13
  %v16.h.ism = icmp ult i32 %v16.h.a, 947912704
  %v16.h.abs = bitcast i32 %v16.h.a to float
  %v16.h.sx = select i1 %v16.h.ism, float %v16.h.abs, float zeroinitializer
  %v16.h.sp = fmul float %v16.h.sx, 0x4170000000000000
  %v16.h.sq = fadd float %v16.h.sp, 0x4160000000000000
  %v16.h.sr = fsub float %v16.h.sq, 0x4160000000000000
  %v16.h.si = fptoui float %v16.h.sr to i32
  %v16.h.t = select i1 %v16.h.ism, i32 %v16.h.si, i32 %v16.h.h
  %v16.h.ov = icmp uge i32 %v16.h.a, 1199566848
  %v16.h.t2 = select i1 %v16.h.ov, i32 31744, i32 %v16.h.t
  %v16.h.isn = icmp ugt i32 %v16.h.a, 2139095040
  %v16.h.t3 = select i1 %v16.h.isn, i32 32256, i32 %v16.h.t2
  %v16.h.o = or i32 %v16.h.t3, %v16.h.sg2
  %v16.h = trunc i32 %v16.h.o to i16
  store i16 %v16.h, ptr %v14, align 2
  br label %loop2.latch
loop2.latch:
  %v2.next = add i32 %v2, 1
  br label %loop2
loop2.exit:
  ret void
}

attributes #0 = { nounwind "frame-pointer"="none" }
