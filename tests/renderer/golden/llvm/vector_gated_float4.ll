; fusegrad kernel vector_gated_float4
define void @vector_gated_float4(ptr noalias %buf0, ptr noalias %buf1) #0 {
entry:
  br label %loop3
loop3:
  %v3 = phi i32 [ 0, %entry ], [ %v3.next, %loop3.latch ]
  %v3.more = icmp slt i32 %v3, 4
  br i1 %v3.more, label %loop3.body, label %loop3.exit
loop3.body:
  %v4 = mul i32 %v3, 4
  %v5 = getelementptr inbounds float, ptr %buf1, i32 %v4
  %v7 = icmp slt i32 %v3, 3
  %v8 = getelementptr inbounds float, ptr %buf0, i32 %v4
  br i1 %v7, label %load10, label %load10.join
load10:
  %v10.val = load <4 x float>, ptr %v8, align 4
  br label %load10.join
load10.join:
  %v10 = phi <4 x float> [ %v10.val, %load10 ], [ <float 0xBFF0000000000000, float 0xBFF0000000000000, float 0xBFF0000000000000, float 0xBFF0000000000000>, %loop3.body ]
  store <4 x float> %v10, ptr %v5, align 4
  br label %loop3.latch
loop3.latch:
  %v3.next = add i32 %v3, 1
  br label %loop3
loop3.exit:
  ret void
}

attributes #0 = { nounwind "frame-pointer"="none" }
