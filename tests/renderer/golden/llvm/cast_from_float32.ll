; fusegrad kernel cast_from_float32
define void @cast_from_float32(ptr noalias %buf0, ptr noalias %buf1, ptr noalias %buf2, ptr noalias %buf3, ptr noalias %buf4, ptr noalias %buf5, ptr noalias %buf6, ptr noalias %buf7, ptr noalias %buf8, ptr noalias %buf9, ptr noalias %buf10, ptr noalias %buf11, ptr noalias %buf12, ptr noalias %buf13) #0 {
entry:
  br label %loop2
loop2:
  %v2 = phi i32 [ 0, %entry ], [ %v2.next, %loop2.latch ]
  %v2.more = icmp slt i32 %v2, 48
  br i1 %v2.more, label %loop2.body, label %loop2.exit
loop2.body:
  %v3 = getelementptr inbounds float, ptr %buf0, i32 %v2
  %v4 = load float, ptr %v3, align 4
  %v6 = getelementptr inbounds i8, ptr %buf1, i32 %v2
  %v7 = fcmp une float %v4, 0x0000000000000000
  %v8.b = zext i1 %v7 to i8
  store i8 %v8.b, ptr %v6, align 1
  %v10 = getelementptr inbounds i8, ptr %buf2, i32 %v2
  %v11.i = call i32 @llvm.fptosi.sat.i32.f32(float %v4)
  %v11.bad = fcmp uge float %v4, 0x41E0000000000000
  %v11.v = select i1 %v11.bad, i32 -2147483648, i32 %v11.i
  %v11 = trunc i32 %v11.v to i8
  store i8 %v11, ptr %v10, align 1
  %v14 = getelementptr inbounds i16, ptr %buf3, i32 %v2
  %v15.i = call i32 @llvm.fptosi.sat.i32.f32(float %v4)
  %v15.bad = fcmp uge float %v4, 0x41E0000000000000
  %v15.v = select i1 %v15.bad, i32 -2147483648, i32 %v15.i
  %v15 = trunc i32 %v15.v to i16
  store i16 %v15, ptr %v14, align 2
  %v18 = getelementptr inbounds i32, ptr %buf4, i32 %v2
  %v19.i = call i64 @llvm.fptosi.sat.i64.f32(float %v4)
  %v19.bad = fcmp uge float %v4, 0x43E0000000000000
  %v19.v = select i1 %v19.bad, i64 -9223372036854775808, i64 %v19.i
  %v19 = trunc i64 %v19.v to i32
  store i32 %v19, ptr %v18, align 4
  %v22 = getelementptr inbounds i64, ptr %buf5, i32 %v2
  %v23.i = call i64 @llvm.fptosi.sat.i64.f32(float %v4)
  %v23.bad = fcmp uge float %v4, 0x43E0000000000000
  %v23.u = call i64 @llvm.fptoui.sat.i64.f32(float %v4)
  %v23.over = fcmp uge float %v4, 0x43F0000000000000
  %v23.s = select i1 %v23.bad, i64 %v23.u, i64 %v23.i
  %v23 = select i1 %v23.over, i64 -9223372036854775808, i64 %v23.s
  store i64 %v23, ptr %v22, align 8
  %v26 = getelementptr inbounds i8, ptr %buf6, i32 %v2
  %v27.i = call i32 @llvm.fptosi.sat.i32.f32(float %v4)
  %v27.bad = fcmp uge float %v4, 0x41E0000000000000
  %v27.v = select i1 %v27.bad, i32 -2147483648, i32 %v27.i
  %v27 = trunc i32 %v27.v to i8
  store i8 %v27, ptr %v26, align 1
  %v30 = getelementptr inbounds i16, ptr %buf7, i32 %v2
  %v31.i = call i32 @llvm.fptosi.sat.i32.f32(float %v4)
  %v31.bad = fcmp uge float %v4, 0x41E0000000000000
  %v31.v = select i1 %v31.bad, i32 -2147483648, i32 %v31.i
  %v31 = trunc i32 %v31.v to i16
  store i16 %v31, ptr %v30, align 2
  %v34 = getelementptr inbounds i32, ptr %buf8, i32 %v2
  %v35.i = call i32 @llvm.fptosi.sat.i32.f32(float %v4)
  %v35.bad = fcmp uge float %v4, 0x41E0000000000000
  %v35 = select i1 %v35.bad, i32 -2147483648, i32 %v35.i
  store i32 %v35, ptr %v34, align 4
  %v38 = getelementptr inbounds i64, ptr %buf9, i32 %v2
  %v39.i = call i64 @llvm.fptosi.sat.i64.f32(float %v4)
  %v39.bad = fcmp uge float %v4, 0x43E0000000000000
  %v39 = select i1 %v39.bad, i64 -9223372036854775808, i64 %v39.i
  store i64 %v39, ptr %v38, align 8
  %v42 = getelementptr inbounds i16, ptr %buf10, i32 %v2
  %v43.rn.b = bitcast float %v4 to i32
  %v43.rn.a = and i32 %v43.rn.b, 2147483647
  %v43.rn.sg = lshr i32 %v43.rn.b, 16
  %v43.rn.sg2 = and i32 %v43.rn.sg, 32768
  %v43.rn.m = sub i32 %v43.rn.a, 939524096
  %v43.rn.h0 = lshr i32 %v43.rn.m, 13
  %v43.rn.odd = and i32 %v43.rn.h0, 1
  %v43.rn.r = add i32 %v43.rn.m, 4095
  %v43.rn.r2 = add i32 %v43.rn.r, %v43.rn.odd
  %v43.rn.h = lshr i32 %v43.rn.r2, 13
  %v43.rn.ism = icmp ult i32 %v43.rn.a, 947912704
  %v43.rn.abs = bitcast i32 %v43.rn.a to float
  %v43.rn.sx = select i1 %v43.rn.ism, float %v43.rn.abs, float zeroinitializer
  %v43.rn.sp = fmul float %v43.rn.sx, 0x4170000000000000
  %v43.rn.sq = fadd float %v43.rn.sp, 0x4160000000000000
  %v43.rn.sr = fsub float %v43.rn.sq, 0x4160000000000000
  %v43.rn.si = fptoui float %v43.rn.sr to i32
  %v43.rn.t = select i1 %v43.rn.ism, i32 %v43.rn.si, i32 %v43.rn.h
  %v43.rn.ov = icmp uge i32 %v43.rn.a, 1199566848
  %v43.rn.t2 = select i1 %v43.rn.ov, i32 31744, i32 %v43.rn.t
  %v43.rn.isn = icmp ugt i32 %v43.rn.a, 2139095040
  %v43.rn.t3 = select i1 %v43.rn.isn, i32 32256, i32 %v43.rn.t2
  %v43.rn.o = or i32 %v43.rn.t3, %v43.rn.sg2
  %v43.rn = trunc i32 %v43.rn.o to i16
  %v43.w = zext i16 %v43.rn to i32
  %v43.a = and i32 %v43.w, 32767
  %v43.sg = and i32 %v43.w, 32768
  %v43.sg2 = shl i32 %v43.sg, 16
  %v43.sh = shl i32 %v43.a, 13
  %v43.nrm = add i32 %v43.sh, 939524096
  %v43.inf = or i32 %v43.sh, 2139095040
  %v43.ex = lshr i32 %v43.a, 10
  %v43.sf = uitofp i32 %v43.a to float
  %v43.sm = fmul float %v43.sf, 0x3E70000000000000
  %v43.sb = bitcast float %v43.sm to i32
  %v43.isz = icmp eq i32 %v43.ex, 0
  %v43.isi = icmp eq i32 %v43.ex, 31
  %v43.t = select i1 %v43.isi, i32 %v43.inf, i32 %v43.nrm
  %v43.t2 = select i1 %v43.isz, i32 %v43.sb, i32 %v43.t
  %v43.o = or i32 %v43.t2, %v43.sg2
  %v43 = bitcast i32 %v43.o to float
  %v44.h.b = bitcast float %v43 to i32
  %v44.h.a = and i32 %v44.h.b, 2147483647
  %v44.h.sg = lshr i32 %v44.h.b, 16
  %v44.h.sg2 = and i32 %v44.h.sg, 32768
  %v44.h.m = sub i32 %v44.h.a, 939524096
  %v44.h.h0 = lshr i32 %v44.h.m, 13
  %v44.h.odd = and i32 %v44.h.h0, 1
  %v44.h.r = add i32 %v44.h.m, 4095
  %v44.h.r2 = add i32 %v44.h.r, %v44.h.odd
  %v44.h.h = lshr i32 %v44.h.r2, 13
  %v44.h.ism = icmp ult i32 %v44.h.a, 947912704
  %v44.h.abs = bitcast i32 %v44.h.a to float
  %v44.h.sx = select i1 %v44.h.ism, float %v44.h.abs, float zeroinitializer
  %v44.h.sp = fmul float %v44.h.sx, 0x4170000000000000
  %v44.h.sq = fadd float %v44.h.sp, 0x4160000000000000
  %v44.h.sr = fsub float %v44.h.sq, 0x4160000000000000
  %v44.h.si = fptoui float %v44.h.sr to i32
  %v44.h.t = select i1 %v44.h.ism, i32 %v44.h.si, i32 %v44.h.h
  %v44.h.ov = icmp uge i32 %v44.h.a, 1199566848
  %v44.h.t2 = select i1 %v44.h.ov, i32 31744, i32 %v44.h.t
  %v44.h.isn = icmp ugt i32 %v44.h.a, 2139095040
  %v44.h.t3 = select i1 %v44.h.isn, i32 32256, i32 %v44.h.t2
  %v44.h.o = or i32 %v44.h.t3, %v44.h.sg2
  %v44.h = trunc i32 %v44.h.o to i16
  store i16 %v44.h, ptr %v42, align 2
  %v46 = getelementptr inbounds i16, ptr %buf11, i32 %v2
  %v47.rn.b = bitcast float %v4 to i32
  %v47.rn.h = lshr i32 %v47.rn.b, 16
  %v47.rn.odd = and i32 %v47.rn.h, 1
  %v47.rn.r = add i32 %v47.rn.b, 32767
  %v47.rn.r2 = add i32 %v47.rn.r, %v47.rn.odd
  %v47.rn.hi = lshr i32 %v47.rn.r2, 16
  %v47.rn.sg = and i32 %v47.rn.h, 32768
  %v47.rn.qn = or i32 %v47.rn.sg, 32704
  %v47.rn.nan = fcmp uno float %v4, %v4
  %v47.rn.sel = select i1 %v47.rn.nan, i32 %v47.rn.qn, i32 %v47.rn.hi
  %v47.rn = trunc i32 %v47.rn.sel to i16
  %v47.w = zext i16 %v47.rn to i32
  %v47.s = shl i32 %v47.w, 16
  %v47 = bitcast i32 %v47.s to float
  %v48.h.b = bitcast float %v47 to i32
  %v48.h.h = lshr i32 %v48.h.b, 16
  %v48.h.odd = and i32 %v48.h.h, 1
  %v48.h.r = add i32 %v48.h.b, 32767
  %v48.h.r2 = add i32 %v48.h.r, %v48.h.odd
  %v48.h.hi = lshr i32 %v48.h.r2, 16
  %v48.h.sg = and i32 %v48.h.h, 32768
  %v48.h.qn = or i32 %v48.h.sg, 32704
  %v48.h.nan = fcmp uno float %v47, %v47
  %v48.h.sel = select i1 %v48.h.nan, i32 %v48.h.qn, i32 %v48.h.hi
  %v48.h = trunc i32 %v48.h.sel to i16
  store i16 %v48.h, ptr %v46, align 2
  %v50 = getelementptr inbounds float, ptr %buf12, i32 %v2
  store float %v4, ptr %v50, align 4
  %v54 = getelementptr inbounds double, ptr %buf13, i32 %v2
  %v55 = fpext float %v4 to double
  store double %v55, ptr %v54, align 8
  br label %loop2.latch
loop2.latch:
  %v2.next = add i32 %v2, 1
  br label %loop2
loop2.exit:
  ret void
}

attributes #0 = { nounwind "frame-pointer"="none" }
