; fusegrad kernel reduce_add_float32
define void @reduce_add_float32(ptr noalias %buf0, ptr noalias %buf1) #0 {
entry:
  %v2 = alloca [1 x float], align 32
  br label %loop4
loop4:
  %v4 = phi i32 [ 0, %entry ], [ %v4.next, %loop4.latch ]
  %v4.more = icmp slt i32 %v4, 3
  br i1 %v4.more, label %loop4.body, label %loop4.exit
loop4.body:
  %v7 = getelementptr inbounds float, ptr %v2, i32 0
  store float 0x0000000000000000, ptr %v7, align 4
  br label %loop11
loop11:
  %v11 = phi i32 [ 0, %loop4.body ], [ %v11.next, %loop11.latch ]
  %v11.more = icmp slt i32 %v11, 4
  br i1 %v11.more, label %loop11.body, label %loop11.exit
loop11.body:
  %v12 = getelementptr inbounds float, ptr %v2, i32 0
  %v14 = getelementptr inbounds float, ptr %v2, i32 0
  %v15 = load float, ptr %v14, align 4
  %v16 = mul i32 %v4, 4
  %v17 = add i32 %v16, %v11
  %v18 = getelementptr inbounds float, ptr %buf0, i32 %v17
  %v19 = load float, ptr %v18, align 4
  %v20 = fadd float %v15, %v19
  store float %v20, ptr %v12, align 4
  br label %loop11.latch
loop11.latch:
  %v11.next = add i32 %v11, 1
  br label %loop11
loop11.exit:
  %v23 = getelementptr inbounds float, ptr %buf1, i32 %v4
  %v25 = getelementptr inbounds float, ptr %v2, i32 0
  %v26 = load float, ptr %v25, align 4
  store float %v26, ptr %v23, align 4
  br label %loop4.latch
loop4.latch:
  %v4.next = add i32 %v4, 1
  br label %loop4
loop4.exit:
  ret void
}

attributes #0 = { nounwind "frame-pointer"="none" }
