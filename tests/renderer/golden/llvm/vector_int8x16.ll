; fusegrad kernel vector_int8x16
define void @vector_int8x16(ptr noalias %buf0, ptr noalias %buf1, ptr noalias %buf2, ptr noalias %buf3, ptr noalias %buf4, ptr noalias %buf5, ptr noalias %buf6, ptr noalias %buf7, ptr noalias %buf8, ptr noalias %buf9, ptr noalias %buf10, ptr noalias %buf11, ptr noalias %buf12) #0 {
entry:
  br label %loop3
loop3:
  %v3 = phi i32 [ 0, %entry ], [ %v3.next, %loop3.latch ]
  %v3.more = icmp slt i32 %v3, 4
  br i1 %v3.more, label %loop3.body, label %loop3.exit
loop3.body:
  %v6 = mul i32 %v3, 16
  %v7 = getelementptr inbounds i8, ptr %buf2, i32 %v6
  %v8 = getelementptr inbounds i8, ptr %buf0, i32 %v6
  %v9 = load <16 x i8>, ptr %v8, align 1
  %v10 = getelementptr inbounds i8, ptr %buf1, i32 %v6
  %v11 = load <16 x i8>, ptr %v10, align 1
  %v12 = add <16 x i8> %v9, %v11
  store <16 x i8> %v12, ptr %v7, align 1
  %v15 = getelementptr inbounds i8, ptr %buf3, i32 %v6
  %v16 = mul <16 x i8> %v9, %v11
  store <16 x i8> %v16, ptr %v15, align 1
  %v19 = getelementptr inbounds i8, ptr %buf4, i32 %v6
  %v20 = call <16 x i8> @llvm.smax.v16i8(<16 x i8> %v9, <16 x i8> %v11)
  store <16 x i8> %v20, ptr %v19, align 1
  %v23 = getelementptr inbounds i8, ptr %buf5, i32 %v6
  %v24 = icmp slt <16 x i8> %v9, %v11
  %v25.b = zext <16 x i1> %v24 to <16 x i8>
  store <16 x i8> %v25.b, ptr %v23, align 1
  %v27 = getelementptr inbounds i8, ptr %buf6, i32 %v6
  %v28 = icmp slt <16 x i8> %v11, %v9
  %v29 = select <16 x i1> %v28, <16 x i8> %v9, <16 x i8> %v11
  store <16 x i8> %v29, ptr %v27, align 1
  %v32 = getelementptr inbounds i8, ptr %buf7, i32 %v6
  %v33.z = icmp eq <16 x i8> %v11, splat (i8 0)
  %v33.m1 = icmp eq <16 x i8> %v11, splat (i8 -1)
  %v33.bad = or <16 x i1> %v33.z, %v33.m1
  %v33.d = select <16 x i1> %v33.bad, <16 x i8> splat (i8 1), <16 x i8> %v11
  %v33.q0 = sdiv <16 x i8> %v9, %v33.d
  %v33.na = sub <16 x i8> splat (i8 0), %v9
  %v33.q1 = select <16 x i1> %v33.m1, <16 x i8> %v33.na, <16 x i8> %v33.q0
  %v33.q = select <16 x i1> %v33.z, <16 x i8> splat (i8 0), <16 x i8> %v33.q1
  %v33 = bitcast <16 x i8> %v33.q to <16 x i8>
  store <16 x i8> %v33, ptr %v32, align 1
  %v36 = getelementptr inbounds i8, ptr %buf8, i32 %v6
  %v37.ok = icmp ult <16 x i8> %v11, splat (i8 8)
  %v37.s = shl <16 x i8> %v9, %v11
  %v37 = select <16 x i1> %v37.ok, <16 x i8> %v37.s, <16 x i8> splat (i8 0)
  store <16 x i8> %v37, ptr %v36, align 1
  %v40 = getelementptr inbounds i8, ptr %buf9, i32 %v6
  %v41 = xor <16 x i8> %v9, %v11
  store <16 x i8> %v41, ptr %v40, align 1
  %v44 = getelementptr inbounds i8, ptr %buf10, i32 %v6
  %v45 = shufflevector <16 x i8> %v9, <16 x i8> poison, <16 x i32> <i32 15, i32 14, i32 13, i32 12, i32 11, i32 10, i32 9, i32 8, i32 7, i32 6, i32 5, i32 4, i32 3, i32 2, i32 1, i32 0>
  store <16 x i8> %v45, ptr %v44, align 1
  %v48 = getelementptr inbounds i8, ptr %buf11, i32 %v6
  %v49 = extractelement <16 x i8> %v11, i32 1
  %v50 = extractelement <16 x i8> %v11, i32 2
  %v51 = extractelement <16 x i8> %v11, i32 3
  %v52 = extractelement <16 x i8> %v11, i32 4
  %v53 = extractelement <16 x i8> %v11, i32 5
  %v54 = extractelement <16 x i8> %v11, i32 6
  %v55 = extractelement <16 x i8> %v11, i32 7
  %v56 = extractelement <16 x i8> %v11, i32 8
  %v57 = extractelement <16 x i8> %v11, i32 9
  %v58 = extractelement <16 x i8> %v11, i32 10
  %v59 = extractelement <16 x i8> %v11, i32 11
  %v60 = extractelement <16 x i8> %v11, i32 12
  %v61 = extractelement <16 x i8> %v11, i32 13
  %v62 = extractelement <16 x i8> %v11, i32 14
  %v63 = extractelement <16 x i8> %v11, i32 15
  %v64 = extractelement <16 x i8> %v11, i32 0
  %v65.0 = insertelement <16 x i8> poison, i8 %v49, i32 0
  %v65.1 = insertelement <16 x i8> %v65.0, i8 %v50, i32 1
  %v65.2 = insertelement <16 x i8> %v65.1, i8 %v51, i32 2
  %v65.3 = insertelement <16 x i8> %v65.2, i8 %v52, i32 3
  %v65.4 = insertelement <16 x i8> %v65.3, i8 %v53, i32 4
  %v65.5 = insertelement <16 x i8> %v65.4, i8 %v54, i32 5
  %v65.6 = insertelement <16 x i8> %v65.5, i8 %v55, i32 6
  %v65.7 = insertelement <16 x i8> %v65.6, i8 %v56, i32 7
  %v65.8 = insertelement <16 x i8> %v65.7, i8 %v57, i32 8
  %v65.9 = insertelement <16 x i8> %v65.8, i8 %v58, i32 9
  %v65.10 = insertelement <16 x i8> %v65.9, i8 %v59, i32 10
  %v65.11 = insertelement <16 x i8> %v65.10, i8 %v60, i32 11
  %v65.12 = insertelement <16 x i8> %v65.11, i8 %v61, i32 12
  %v65.13 = insertelement <16 x i8> %v65.12, i8 %v62, i32 13
  %v65.14 = insertelement <16 x i8> %v65.13, i8 %v63, i32 14
  %v65 = insertelement <16 x i8> %v65.14, i8 %v64, i32 15
  store <16 x i8> %v65, ptr %v48, align 1
  %v68 = getelementptr inbounds float, ptr %buf12, i32 %v6
  %v69 = sitofp <16 x i8> %v9 to <16 x float>
  store <16 x float> %v69, ptr %v68, align 4
  br label %loop3.latch
loop3.latch:
  %v3.next = add i32 %v3, 1
  br label %loop3
loop3.exit:
  ret void
}

attributes #0 = { nounwind "frame-pointer"="none" }
