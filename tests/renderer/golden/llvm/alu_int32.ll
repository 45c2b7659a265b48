; fusegrad kernel alu_int32
define void @alu_int32(ptr noalias %buf0, ptr noalias %buf1, ptr noalias %buf2, ptr noalias %buf3, ptr noalias %buf4, ptr noalias %buf5, ptr noalias %buf6, ptr noalias %buf7, ptr noalias %buf8, ptr noalias %buf9, ptr noalias %buf10, ptr noalias %buf11, ptr noalias %buf12, ptr noalias %buf13, ptr noalias %buf14, ptr noalias %buf15, ptr noalias %buf16, ptr noalias %buf17, ptr noalias %buf18, ptr noalias %buf19, ptr noalias %buf20, ptr noalias %buf21, ptr noalias %buf22, ptr noalias %buf23) #0 {
entry:
  br label %loop5
loop5:
  %v5 = phi i32 [ 0, %entry ], [ %v5.next, %loop5.latch ]
  %v5.more = icmp slt i32 %v5, 289
  br i1 %v5.more, label %loop5.body, label %loop5.exit
loop5.body:
  %v6 = getelementptr inbounds i32, ptr %buf0, i32 %v5
  %v7 = load i32, ptr %v6, align 4
  %v8 = getelementptr inbounds i32, ptr %buf1, i32 %v5
  %v9 = load i32, ptr %v8, align 4
  %v10 = getelementptr inbounds i32, ptr %buf2, i32 %v5
  %v11 = load i32, ptr %v10, align 4
  %v12 = getelementptr inbounds i8, ptr %buf3, i32 %v5
  %v13.mem = load i8, ptr %v12, align 1
  %v13 = icmp ne i8 %v13.mem, zeroinitializer
  %v15 = getelementptr inbounds i32, ptr %buf4, i32 %v5
  %v16 = add i32 %v7, %v9
  store i32 %v16, ptr %v15, align 4
  %v19 = getelementptr inbounds i32, ptr %buf5, i32 %v5
  %v20 = sub i32 %v7, %v9
  store i32 %v20, ptr %v19, align 4
  %v23 = getelementptr inbounds i32, ptr %buf6, i32 %v5
  %v24 = mul i32 %v7, %v9
  store i32 %v24, ptr %v23, align 4
  %v27 = getelementptr inbounds i32, ptr %buf7, i32 %v5
  %v28.z = icmp eq i32 %v9, 0
  %v28.m1 = icmp eq i32 %v9, -1
  %v28.bad = or i1 %v28.z, %v28.m1
  %v28.d = select i1 %v28.bad, i32 1, i32 %v9
  %v28.q0 = sdiv i32 %v7, %v28.d
  %v28.na = sub i32 0, %v7
  %v28.q1 = select i1 %v28.m1, i32 %v28.na, i32 %v28.q0
  %v28.q = select i1 %v28.z, i32 0, i32 %v28.q1
  %v28 = bitcast i32 %v28.q to i32
  store i32 %v28, ptr %v27, align 4
  %v31 = getelementptr inbounds i32, ptr %buf8, i32 %v5
  %v32.z = icmp eq i32 %v9, 0
  %v32.m1 = icmp eq i32 %v9, -1
  %v32.bad = or i1 %v32.z, %v32.m1
  %v32.d = select i1 %v32.bad, i32 1, i32 %v9
  %v32.r = srem i32 %v7, %v32.d
  %v32 = bitcast i32 %v32.r to i32
  store i32 %v32, ptr %v31, align 4
  %v35 = getelementptr inbounds i32, ptr %buf9, i32 %v5
  %v36.z = icmp eq i32 %v9, 0
  %v36.m1 = icmp eq i32 %v9, -1
  %v36.bad = or i1 %v36.z, %v36.m1
  %v36.d = select i1 %v36.bad, i32 1, i32 %v9
  %v36.q0 = sdiv i32 %v7, %v36.d
  %v36.na = sub i32 0, %v7
  %v36.q1 = select i1 %v36.m1, i32 %v36.na, i32 %v36.q0
  %v36.q = select i1 %v36.z, i32 0, i32 %v36.q1
  %v36.r = srem i32 %v7, %v36.d
  %v36.rx = xor i32 %v36.r, %v9
  %v36.sd = icmp slt i32 %v36.rx, 0
  %v36.nz = icmp ne i32 %v36.r, 0
  %v36.adj = and i1 %v36.sd, %v36.nz
  %v36.one = zext i1 %v36.adj to i32
  %v36 = sub i32 %v36.q, %v36.one
  store i32 %v36, ptr %v35, align 4
  %v39 = getelementptr inbounds i32, ptr %buf10, i32 %v5
  %v40.z = icmp eq i32 %v9, 0
  %v40.m1 = icmp eq i32 %v9, -1
  %v40.bad = or i1 %v40.z, %v40.m1
  %v40.d = select i1 %v40.bad, i32 1, i32 %v9
  %v40.r = srem i32 %v7, %v40.d
  %v40.rx = xor i32 %v40.r, %v9
  %v40.sd = icmp slt i32 %v40.rx, 0
  %v40.nz = icmp ne i32 %v40.r, 0
  %v40.adj = and i1 %v40.sd, %v40.nz
  %v40.add = select i1 %v40.adj, i32 %v9, i32 0
  %v40 = add i32 %v40.r, %v40.add
  store i32 %v40, ptr %v39, align 4
  %v43 = getelementptr inbounds i32, ptr %buf11, i32 %v5
  %v44 = call i32 @llvm.smax.i32(i32 %v7, i32 %v9)
  store i32 %v44, ptr %v43, align 4
  %v47 = getelementptr inbounds i32, ptr %buf12, i32 %v5
  %v48.ok = icmp ult i32 %v9, 32
  %v48.s = shl i32 %v7, %v9
  %v48 = select i1 %v48.ok, i32 %v48.s, i32 0
  store i32 %v48, ptr %v47, align 4
  %v51 = getelementptr inbounds i32, ptr %buf13, i32 %v5
  %v52.ok = icmp ult i32 %v9, 32
  %v52.c = select i1 %v52.ok, i32 %v9, i32 31
  %v52 = ashr i32 %v7, %v52.c
  store i32 %v52, ptr %v51, align 4
  %v55 = getelementptr inbounds i32, ptr %buf14, i32 %v5
  %v56 = and i32 %v7, %v9
  store i32 %v56, ptr %v55, align 4
  %v59 = getelementptr inbounds i32, ptr %buf15, i32 %v5
  %v60 = or i32 %v7, %v9
  store i32 %v60, ptr %v59, align 4
  %v63 = getelementptr inbounds i32, ptr %buf16, i32 %v5
  %v64 = xor i32 %v7, %v9
  store i32 %v64, ptr %v63, align 4
  %v67 = getelementptr inbounds i8, ptr %buf17, i32 %v5
  %v68 = icmp slt i32 %v7, %v9
  %v69.b = zext i1 %v68 to i8
  store i8 %v69.b, ptr %v67, align 1
  %v71 = getelementptr inbounds i8, ptr %buf18, i32 %v5
  %v72 = icmp ne i32 %v7, %v9
  %v73.b = zext i1 %v72 to i8
  store i8 %v73.b, ptr %v71, align 1
  %v75 = getelementptr inbounds i8, ptr %buf19, i32 %v5
  %v76 = icmp eq i32 %v7, %v9
  %v77.b = zext i1 %v76 to i8
  store i8 %v77.b, ptr %v75, align 1
  %v79 = getelementptr inbounds i32, ptr %buf20, i32 %v5
  %v80 = sub i32 0, %v7
  store i32 %v80, ptr %v79, align 4
  %v83 = getelementptr inbounds i32, ptr %buf21, i32 %v5
  %v84 = bitcast i32 %v7 to i32
  store i32 %v84, ptr %v83, align 4
  %v87 = getelementptr inbounds i32, ptr %buf22, i32 %v5
  %v88 = select i1 %v13, i32 %v7, i32 %v9
  store i32 %v88, ptr %v87, align 4
  %v91 = getelementptr inbounds i32, ptr %buf23, i32 %v5
  %v92.m = mul i32 %v7, %v9
  %v92 = add i32 %v92.m, %v11
  store i32 %v92, ptr %v91, align 4
  br label %loop5.latch
loop5.latch:
  %v5.next = add i32 %v5, 1
  br label %loop5
loop5.exit:
  ret void
}

attributes #0 = { nounwind "frame-pointer"="none" }
