; fusegrad kernel symbolic_end
define void @symbolic_end(ptr noalias %buf0, ptr noalias %buf1, i32 %var0) #0 {
entry:
  br label %loop3
loop3:
  %v3 = phi i32 [ 0, %entry ], [ %v3.next, %loop3.latch ]
  %v3.more = icmp slt i32 %v3, %var0
  br i1 %v3.more, label %loop3.body, label %loop3.exit
loop3.body:
  %v4 = getelementptr inbounds i32, ptr %buf1, i32 %v3
  %v5 = getelementptr inbounds i32, ptr %buf0, i32 %v3
  %v6 = load i32, ptr %v5, align 4
  %v7 = add i32 %v6, %var0
  store i32 %v7, ptr %v4, align 4
  br label %loop3.latch
loop3.latch:
  %v3.next = add i32 %v3, 1
  br label %loop3
loop3.exit:
  ret void
}

attributes #0 = { nounwind "frame-pointer"="none" }
