; fusegrad kernel vector_float32x4
define void @vector_float32x4(ptr noalias %buf0, ptr noalias %buf1, ptr noalias %buf2, ptr noalias %buf3, ptr noalias %buf4, ptr noalias %buf5, ptr noalias %buf6, ptr noalias %buf7, ptr noalias %buf8, ptr noalias %buf9, ptr noalias %buf10, ptr noalias %buf11) #0 {
entry:
  br label %loop3
loop3:
  %v3 = phi i32 [ 0, %entry ], [ %v3.next, %loop3.latch ]
  %v3.more = icmp slt i32 %v3, 4
  br i1 %v3.more, label %loop3.body, label %loop3.exit
loop3.body:
  %v5 = mul i32 %v3, 4
  %v6 = getelementptr inbounds float, ptr %buf2, i32 %v5
  %v7 = getelementptr inbounds float, ptr %buf0, i32 %v5
  %v8 = load <4 x float>, ptr %v7, align 4
  %v9 = getelementptr inbounds float, ptr %buf1, i32 %v5
  %v10 = load <4 x float>, ptr %v9, align 4
  %v11 = fadd <4 x float> %v8, %v10
  store <4 x float> %v11, ptr %v6, align 4
  %v14 = getelementptr inbounds float, ptr %buf3, i32 %v5
  %v15 = fmul <4 x float> %v8, %v10
  store <4 x float> %v15, ptr %v14, align 4
  %v18 = getelementptr inbounds float, ptr %buf4, i32 %v5
  %v19 = call <4 x float> @llvm.maximum.v4f32(<4 x float> %v8, <4 x float> %v10)
  store <4 x float> %v19, ptr %v18, align 4
  %v22 = getelementptr inbounds i8, ptr %buf5, i32 %v5
  %v23 = fcmp olt <4 x float> %v8, %v10
  %v24.b = zext <4 x i1> %v23 to <4 x i8>
  store <4 x i8> %v24.b, ptr %v22, align 1
  %v26 = getelementptr inbounds float, ptr %buf6, i32 %v5
  %v27 = fcmp olt <4 x float> %v10, %v8
  %v28 = select <4 x i1> %v27, <4 x float> %v8, <4 x float> %v10
  store <4 x float> %v28, ptr %v26, align 4
  %v31 = getelementptr inbounds float, ptr %buf7, i32 %v5
  %v32 = fdiv <4 x float> %v8, %v10
  store <4 x float> %v32, ptr %v31, align 4
  %v35 = getelementptr inbounds float, ptr %buf8, i32 %v5
  %v36 = call <4 x float> @llvm.sqrt.v4f32(<4 x float> %v8)
  store <4 x float> %v36, ptr %v35, align 4
  %v39 = getelementptr inbounds float, ptr %buf9, i32 %v5
  %v40 = shufflevector <4 x float> %v8, <4 x float> poison, <4 x i32> <i32 3, i32 2, i32 1, i32 0>
  store <4 x float> %v40, ptr %v39, align 4
  %v43 = getelementptr inbounds float, ptr %buf10, i32 %v5
  %v44 = extractelement <4 x float> %v10, i32 1
  %v45 = extractelement <4 x float> %v10, i32 2
  %v46 = extractelement <4 x float> %v10, i32 3
  %v47 = extractelement <4 x float> %v10, i32 0
  %v48.0 = insertelement <4 x float> poison, float %v44, i32 0
  %v48.1 = insertelement <4 x float> %v48.0, float %v45, i32 1
  %v48.2 = insertelement <4 x float> %v48.1, float %v46, i32 2
  %v48 = insertelement <4 x float> %v48.2, float %v47, i32 3
  store <4 x float> %v48, ptr %v43, align 4
  %v51 = getelementptr inbounds i32, ptr %buf11, i32 %v5
  %v52.i = call <4 x i32> @llvm.fptosi.sat.v4i32.v4f32(<4 x float> %v8)
  %v52.bad = fcmp uge <4 x float> %v8, splat (float 0x41E0000000000000)
  %v52 = select <4 x i1> %v52.bad, <4 x i32> splat (i32 -2147483648), <4 x i32> %v52.i
  store <4 x i32> %v52, ptr %v51, align 4
  br label %loop3.latch
loop3.latch:
  %v3.next = add i32 %v3, 1
  br label %loop3
loop3.exit:
  ret void
}

attributes #0 = { nounwind "frame-pointer"="none" }
