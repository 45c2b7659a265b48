; fusegrad kernel gated_float32
define void @gated_float32(ptr noalias %buf0, ptr noalias %buf1, ptr noalias %buf2) #0 {
entry:
  br label %loop4
loop4:
  %v4 = phi i32 [ 0, %entry ], [ %v4.next, %loop4.latch ]
  %v4.more = icmp slt i32 %v4, 8
  br i1 %v4.more, label %loop4.body, label %loop4.exit
loop4.body:
  %v5 = getelementptr inbounds float, ptr %buf1, i32 %v4
  %v7 = add i32 %v4, 3
  %v8 = icmp slt i32 %v7, 8
  %v9 = getelementptr inbounds float, ptr %buf0, i32 %v7
  br i1 %v8, label %load11, label %load11.join
load11:
  %v11.val = load float, ptr %v9, align 4
  br label %load11.join
load11.join:
  %v11 = phi float [ %v11.val, %load11 ], [ 0xC000000000000000, %loop4.body ]
  store float %v11, ptr %v5, align 4
  %v14 = and i32 %v4, 1
  %v16 = icmp eq i32 %v14, 0
  %v17 = getelementptr inbounds float, ptr %buf2, i32 %v4
  %v18 = getelementptr inbounds float, ptr %buf0, i32 %v4
  %v19 = load float, ptr %v18, align 4
  br i1 %v16, label %store20, label %store20.join
store20:
  store float %v19, ptr %v17, align 4
  br label %store20.join
store20.join:
  br label %loop4.latch
loop4.latch:
  %v4.next = add i32 %v4, 1
  br label %loop4
loop4.exit:
  ret void
}

attributes #0 = { nounwind "frame-pointer"="none" }
