; fusegrad kernel multicore
define void @multicore(ptr noalias %buf0, ptr noalias %buf1, i32 %core) #0 {
entry:
  br label %loop5
loop5:
  %v5 = phi i32 [ 0, %entry ], [ %v5.next, %loop5.latch ]
  %v5.more = icmp slt i32 %v5, 5
  br i1 %v5.more, label %loop5.body, label %loop5.exit
loop5.body:
  %v6 = mul i32 %core, 5
  %v7 = add i32 %v6, %v5
  %v8 = getelementptr inbounds float, ptr %buf1, i32 %v7
  %v9 = getelementptr inbounds float, ptr %buf0, i32 %v7
  %v10 = load float, ptr %v9, align 4
  %v11 = sitofp i32 %core to float
  %v12 = fadd float %v10, %v11
  store float %v12, ptr %v8, align 4
  br label %loop5.latch
loop5.latch:
  %v5.next = add i32 %v5, 1
  br label %loop5
loop5.exit:
  ret void
}

attributes #0 = { nounwind "frame-pointer"="none" }
