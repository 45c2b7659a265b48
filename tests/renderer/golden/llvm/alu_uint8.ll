; fusegrad kernel alu_uint8
define void @alu_uint8(ptr noalias %buf0, ptr noalias %buf1, ptr noalias %buf2, ptr noalias %buf3, ptr noalias %buf4, ptr noalias %buf5, ptr noalias %buf6, ptr noalias %buf7, ptr noalias %buf8, ptr noalias %buf9, ptr noalias %buf10, ptr noalias %buf11, ptr noalias %buf12, ptr noalias %buf13, ptr noalias %buf14, ptr noalias %buf15, ptr noalias %buf16, ptr noalias %buf17, ptr noalias %buf18, ptr noalias %buf19, ptr noalias %buf20, ptr noalias %buf21, ptr noalias %buf22, ptr noalias %buf23) #0 {
entry:
  br label %loop5
loop5:
  %v5 = phi i32 [ 0, %entry ], [ %v5.next, %loop5.latch ]
  %v5.more = icmp slt i32 %v5, 289
  br i1 %v5.more, label %loop5.body, label %loop5.exit
loop5.body:
  %v6 = getelementptr inbounds i8, ptr %buf0, i32 %v5
  %v7 = load i8, ptr %v6, align 1
  %v8 = getelementptr inbounds i8, ptr %buf1, i32 %v5
  %v9 = load i8, ptr %v8, align 1
  %v10 = getelementptr inbounds i8, ptr %buf2, i32 %v5
  %v11 = load i8, ptr %v10, align 1
  %v12 = getelementptr inbounds i8, ptr %buf3, i32 %v5
  %v13.mem = load i8, ptr %v12, align 1
  %v13 = icmp ne i8 %v13.mem, zeroinitializer
  %v15 = getelementptr inbounds i8, ptr %buf4, i32 %v5
  %v16 = add i8 %v7, %v9
  store i8 %v16, ptr %v15, align 1
  %v19 = getelementptr inbounds i8, ptr %buf5, i32 %v5
  %v20 = sub i8 %v7, %v9
  store i8 %v20, ptr %v19, align 1
  %v23 = getelementptr inbounds i8, ptr %buf6, i32 %v5
  %v24 = mul i8 %v7, %v9
  store i8 %v24, ptr %v23, align 1
  %v27 = getelementptr inbounds i8, ptr %buf7, i32 %v5
  %v28.z = icmp eq i8 %v9, 0
  %v28.d = select i1 %v28.z, i8 1, i8 %v9
  %v28.q0 = udiv i8 %v7, %v28.d
  %v28.q = select i1 %v28.z, i8 0, i8 %v28.q0
  %v28 = bitcast i8 %v28.q to i8
  store i8 %v28, ptr %v27, align 1
  %v31 = getelementptr inbounds i8, ptr %buf8, i32 %v5
  %v32.z = icmp eq i8 %v9, 0
  %v32.d = select i1 %v32.z, i8 1, i8 %v9
  %v32.r = urem i8 %v7, %v32.d
  %v32 = bitcast i8 %v32.r to i8
  store i8 %v32, ptr %v31, align 1
  %v35 = getelementptr inbounds i8, ptr %buf9, i32 %v5
  %v36.z = icmp eq i8 %v9, 0
  %v36.d = select i1 %v36.z, i8 1, i8 %v9
  %v36.q0 = udiv i8 %v7, %v36.d
  %v36.q = select i1 %v36.z, i8 0, i8 %v36.q0
  %v36.r = urem i8 %v7, %v36.d
  %v36 = bitcast i8 %v36.q to i8
  store i8 %v36, ptr %v35, align 1
  %v39 = getelementptr inbounds i8, ptr %buf10, i32 %v5
  %v40.z = icmp eq i8 %v9, 0
  %v40.d = select i1 %v40.z, i8 1, i8 %v9
  %v40.r = urem i8 %v7, %v40.d
  %v40 = bitcast i8 %v40.r to i8
  store i8 %v40, ptr %v39, align 1
  %v43 = getelementptr inbounds i8, ptr %buf11, i32 %v5
  %v44 = call i8 @llvm.umax.i8(i8 %v7, i8 %v9)
  store i8 %v44, ptr %v43, align 1
  %v47 = getelementptr inbounds i8, ptr %buf12, i32 %v5
  %v48.ok = icmp ult i8 %v9, 8
  %v48.s = shl i8 %v7, %v9
  %v48 = select i1 %v48.ok, i8 %v48.s, i8 0
  store i8 %v48, ptr %v47, align 1
  %v51 = getelementptr inbounds i8, ptr %buf13, i32 %v5
  %v52.ok = icmp ult i8 %v9, 8
  %v52.s = lshr i8 %v7, %v9
  %v52 = select i1 %v52.ok, i8 %v52.s, i8 0
  store i8 %v52, ptr %v51, align 1
  %v55 = getelementptr inbounds i8, ptr %buf14, i32 %v5
  %v56 = and i8 %v7, %v9
  store i8 %v56, ptr %v55, align 1
  %v59 = getelementptr inbounds i8, ptr %buf15, i32 %v5
  %v60 = or i8 %v7, %v9
  store i8 %v60, ptr %v59, align 1
  %v63 = getelementptr inbounds i8, ptr %buf16, i32 %v5
  %v64 = xor i8 %v7, %v9
  store i8 %v64, ptr %v63, align 1
  %v67 = getelementptr inbounds i8, ptr %buf17, i32 %v5
  %v68 = icmp ult i8 %v7, %v9
  %v69.b = zext i1 %v68 to i8
  store i8 %v69.b, ptr %v67, align 1
  %v71 = getelementptr inbounds i8, ptr %buf18, i32 %v5
  %v72 = icmp ne i8 %v7, %v9
  %v73.b = zext i1 %v72 to i8
  store i8 %v73.b, ptr %v71, align 1
  %v75 = getelementptr inbounds i8, ptr %buf19, i32 %v5
  %v76 = icmp eq i8 %v7, %v9
  %v77.b = zext i1 %v76 to i8
  store i8 %v77.b, ptr %v75, align 1
  %v79 = getelementptr inbounds i8, ptr %buf20, i32 %v5
  %v80 = sub i8 0, %v7
  store i8 %v80, ptr %v79, align 1
  %v83 = getelementptr inbounds i8, ptr %buf21, i32 %v5
  %v84 = bitcast i8 %v7 to i8
  store i8 %v84, ptr %v83, align 1
  %v87 = getelementptr inbounds i8, ptr %buf22, i32 %v5
  %v88 = select i1 %v13, i8 %v7, i8 %v9
  store i8 %v88, ptr %v87, align 1
  %v91 = getelementptr inbounds i8, ptr %buf23, i32 %v5
  %v92.m = mul i8 %v7, %v9
  %v92 = add i8 %v92.m, %v11
  store i8 %v92, ptr %v91, align 1
  br label %loop5.latch
loop5.latch:
  %v5.next = add i32 %v5, 1
  br label %loop5
loop5.exit:
  ret void
}

attributes #0 = { nounwind "frame-pointer"="none" }
