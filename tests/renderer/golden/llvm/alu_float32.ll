; fusegrad kernel alu_float32
define void @alu_float32(ptr noalias %buf0, ptr noalias %buf1, ptr noalias %buf2, ptr noalias %buf3, ptr noalias %buf4, ptr noalias %buf5, ptr noalias %buf6, ptr noalias %buf7, ptr noalias %buf8, ptr noalias %buf9, ptr noalias %buf10, ptr noalias %buf11, ptr noalias %buf12, ptr noalias %buf13, ptr noalias %buf14, ptr noalias %buf15, ptr noalias %buf16, ptr noalias %buf17, ptr noalias %buf18, ptr noalias %buf19) #0 {
entry:
  br label %loop5
loop5:
  %v5 = phi i32 [ 0, %entry ], [ %v5.next, %loop5.latch ]
  %v5.more = icmp slt i32 %v5, 625
  br i1 %v5.more, label %loop5.body, label %loop5.exit
loop5.body:
  %v6 = getelementptr inbounds float, ptr %buf0, i32 %v5
  %v7 = load float, ptr %v6, align 4
  %v8 = getelementptr inbounds float, ptr %buf1, i32 %v5
  %v9 = load float, ptr %v8, align 4
  %v10 = getelementptr inbounds float, ptr %buf2, i32 %v5
  %v11 = load float, ptr %v10, align 4
  %v12 = getelementptr inbounds i8, ptr %buf3, i32 %v5
  %v13.mem = load i8, ptr %v12, align 1
  %v13 = icmp ne i8 %v13.mem, zeroinitializer
  %v15 = getelementptr inbounds float, ptr %buf4, i32 %v5
  %v16 = fadd float %v7, %v9
  store float %v16, ptr %v15, align 4
  %v19 = getelementptr inbounds float, ptr %buf5, i32 %v5
  %v20 = fsub float %v7, %v9
  store float %v20, ptr %v19, align 4
  %v23 = getelementptr inbounds float, ptr %buf6, i32 %v5
  %v24 = fmul float %v7, %v9
  store float %v24, ptr %v23, align 4
  %v27 = getelementptr inbounds float, ptr %buf7, i32 %v5
  %v28 = fdiv float %v7, %v9
  store float %v28, ptr %v27, align 4
  %v31 = getelementptr inbounds float, ptr %buf8, i32 %v5
  %v32 = call float @llvm.maximum.f32(float %v7, float %v9)
  store float %v32, ptr %v31, align 4
  %v35 = getelementptr inbounds i8, ptr %buf9, i32 %v5
  %v36 = fcmp olt float %v7, %v9
  %v37.b = zext i1 %v36 to i8
  store i8 %v37.b, ptr %v35, align 1
  %v39 = getelementptr inbounds i8, ptr %buf10, i32 %v5
  %v40 = fcmp une float %v7, %v9
  %v41.b = zext i1 %v40 to i8
  store i8 %v41.b, ptr %v39, align 1
  %v43 = getelementptr inbounds i8, ptr %buf11, i32 %v5
  %v44 = fcmp oeq float %v7, %v9
  %v45.b = zext i1 %v44 to i8
  store i8 %v45.b, ptr %v43, align 1
  %v47 = getelementptr inbounds float, ptr %buf12, i32 %v5
  %v48 = fneg float %v7
  store float %v48, ptr %v47, align 4
  %v51 = getelementptr inbounds float, ptr %buf13, i32 %v5
  %v52 = fdiv float 0x3FF0000000000000, %v7
  store float %v52, ptr %v51, align 4
  %v55 = getelementptr inbounds float, ptr %buf14, i32 %v5
  %v56 = call float @llvm.sqrt.f32(float %v7)
  store float %v56, ptr %v55, align 4
  %v59 = getelementptr inbounds float, ptr %buf15, i32 %v5
  %v60 = call float @llvm.log2.f32(float %v7)
  store float %v60, ptr %v59, align 4
  %v63 = getelementptr inbounds float, ptr %buf16, i32 %v5
  %v64 = call float @llvm.sin.f32(float %v7)
  store float %v64, ptr %v63, align 4
  %v67 = getelementptr inbounds float, ptr %buf17, i32 %v5
  %v68 = call float @llvm.trunc.f32(float %v7)
  store float %v68, ptr %v67, align 4
  %v71 = getelementptr inbounds float, ptr %buf18, i32 %v5
  %v72 = select i1 %v13, float %v7, float %v9
  store float %v72, ptr %v71, align 4
  %v75 = getelementptr inbounds float, ptr %buf19, i32 %v5
  %v76 = call float @llvm.fma.f32(float %v7, float %v9, float %v11)
  store float %v76, ptr %v75, align 4
  br label %loop5.latch
loop5.latch:
  %v5.next = add i32 %v5, 1
  br label %loop5
loop5.exit:
  ret void
}

attributes #0 = { nounwind "frame-pointer"="none" }
