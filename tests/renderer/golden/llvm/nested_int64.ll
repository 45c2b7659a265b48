; fusegrad kernel nested_int64
define void @nested_int64(ptr noalias %buf0, ptr noalias %buf1, ptr noalias %buf2) #0 {
entry:
  br label %loop4
loop4:
  %v4 = phi i64 [ 0, %entry ], [ %v4.next, %loop4.latch ]
  %v4.more = icmp slt i64 %v4, 3
  br i1 %v4.more, label %loop4.body, label %loop4.exit
loop4.body:
  br label %loop6
loop6:
  %v6 = phi i64 [ 0, %loop4.body ], [ %v6.next, %loop6.latch ]
  %v6.more = icmp slt i64 %v6, 4
  br i1 %v6.more, label %loop6.body, label %loop6.exit
loop6.body:
  %v7 = mul i64 %v4, 4
  %v8 = add i64 %v7, %v6
  %v9 = getelementptr inbounds double, ptr %buf2, i64 %v8
  %v10 = getelementptr inbounds double, ptr %buf0, i64 %v4
  %v11 = load double, ptr %v10, align 8
  %v12 = getelementptr inbounds double, ptr %buf1, i64 %v6
  %v13 = load double, ptr %v12, align 8
  %v14 = fmul double %v11, %v13
  store double %v14, ptr %v9, align 8
  br label %loop6.latch
loop6.latch:
  %v6.next = add i64 %v6, 1
  br label %loop6
loop6.exit:
  br label %loop4.latch
loop4.latch:
  %v4.next = add i64 %v4, 1
  br label %loop4
loop4.exit:
  ret void
}

attributes #0 = { nounwind "frame-pointer"="none" }
