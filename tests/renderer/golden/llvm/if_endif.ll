; fusegrad kernel if_endif
define void @if_endif(ptr noalias %buf0, ptr noalias %buf1) #0 {
entry:
  br label %loop3
loop3:
  %v3 = phi i32 [ 0, %entry ], [ %v3.next, %loop3.latch ]
  %v3.more = icmp slt i32 %v3, 8
  br i1 %v3.more, label %loop3.body, label %loop3.exit
loop3.body:
  %v5 = icmp slt i32 %v3, 3
  br i1 %v5, label %if6.then, label %if6.end
if6.then:
  %v7 = getelementptr inbounds float, ptr %buf1, i32 %v3
  %v8 = getelementptr inbounds float, ptr %buf0, i32 %v3
  %v9 = load float, ptr %v8, align 4
  %v11 = fmul float %v9, 0x4000000000000000
  store float %v11, ptr %v7, align 4
  br label %if6.end
if6.end:
  br label %loop3.latch
loop3.latch:
  %v3.next = add i32 %v3, 1
  br label %loop3
loop3.exit:
  ret void
}

attributes #0 = { nounwind "frame-pointer"="none" }
