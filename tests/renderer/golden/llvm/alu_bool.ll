; fusegrad kernel alu_bool
define void @alu_bool(ptr noalias %buf0, ptr noalias %buf1, ptr noalias %buf2, ptr noalias %buf3, ptr noalias %buf4, ptr noalias %buf5, ptr noalias %buf6, ptr noalias %buf7, ptr noalias %buf8, ptr noalias %buf9, ptr noalias %buf10, ptr noalias %buf11, ptr noalias %buf12, ptr noalias %buf13, ptr noalias %buf14, ptr noalias %buf15, ptr noalias %buf16) #0 {
entry:
  br label %loop5
loop5:
  %v5 = phi i32 [ 0, %entry ], [ %v5.next, %loop5.latch ]
  %v5.more = icmp slt i32 %v5, 4
  br i1 %v5.more, label %loop5.body, label %loop5.exit
loop5.body:
  %v6 = getelementptr inbounds i8, ptr %buf0, i32 %v5
  %v7.mem = load i8, ptr %v6, align 1
  %v7 = icmp ne i8 %v7.mem, zeroinitializer
  %v8 = getelementptr inbounds i8, ptr %buf1, i32 %v5
  %v9.mem = load i8, ptr %v8, align 1
  %v9 = icmp ne i8 %v9.mem, zeroinitializer
  %v10 = getelementptr inbounds i8, ptr %buf2, i32 %v5
  %v11.mem = load i8, ptr %v10, align 1
  %v11 = icmp ne i8 %v11.mem, zeroinitializer
  %v12 = getelementptr inbounds i8, ptr %buf3, i32 %v5
  %v13.mem = load i8, ptr %v12, align 1
  %v13 = icmp ne i8 %v13.mem, zeroinitializer
  %v15 = getelementptr inbounds i8, ptr %buf4, i32 %v5
  %v16 = or i1 %v7, %v9
  %v17.b = zext i1 %v16 to i8
  store i8 %v17.b, ptr %v15, align 1
  %v19 = getelementptr inbounds i8, ptr %buf5, i32 %v5
  %v20 = xor i1 %v7, %v9
  %v21.b = zext i1 %v20 to i8
  store i8 %v21.b, ptr %v19, align 1
  %v23 = getelementptr inbounds i8, ptr %buf6, i32 %v5
  %v24 = and i1 %v7, %v9
  %v25.b = zext i1 %v24 to i8
  store i8 %v25.b, ptr %v23, align 1
  %v27 = getelementptr inbounds i8, ptr %buf7, i32 %v5
  %v28 = and i1 %v7, %v9
  %v29.b = zext i1 %v28 to i8
  store i8 %v29.b, ptr %v27, align 1
  %v31 = getelementptr inbounds i8, ptr %buf8, i32 %v5
  %v32 = or i1 %v7, %v9
  %v33.b = zext i1 %v32 to i8
  store i8 %v33.b, ptr %v31, align 1
  %v35 = getelementptr inbounds i8, ptr %buf9, i32 %v5
  %v36 = xor i1 %v7, %v9
  %v37.b = zext i1 %v36 to i8
  store i8 %v37.b, ptr %v35, align 1
  %v39 = getelementptr inbounds i8, ptr %buf10, i32 %v5
  %v40 = or i1 %v7, %v9
  %v41.b = zext i1 %v40 to i8
  store i8 %v41.b, ptr %v39, align 1
  %v43 = getelementptr inbounds i8, ptr %buf11, i32 %v5
  %v44 = icmp ult i1 %v7, %v9
  %v45.b = zext i1 %v44 to i8
  store i8 %v45.b, ptr %v43, align 1
  %v47 = getelementptr inbounds i8, ptr %buf12, i32 %v5
  %v48 = icmp ne i1 %v7, %v9
  %v49.b = zext i1 %v48 to i8
  store i8 %v49.b, ptr %v47, align 1
  %v51 = getelementptr inbounds i8, ptr %buf13, i32 %v5
  %v52 = icmp eq i1 %v7, %v9
  %v53.b = zext i1 %v52 to i8
  store i8 %v53.b, ptr %v51, align 1
  %v55 = getelementptr inbounds i8, ptr %buf14, i32 %v5
  %v56 = xor i1 %v7, true
  %v57.b = zext i1 %v56 to i8
  store i8 %v57.b, ptr %v55, align 1
  %v59 = getelementptr inbounds i8, ptr %buf15, i32 %v5
  %v60 = select i1 %v13, i1 %v7, i1 %v9
  %v61.b = zext i1 %v60 to i8
  store i8 %v61.b, ptr %v59, align 1
  %v63 = getelementptr inbounds i8, ptr %buf16, i32 %v5
  %v64.m = mul i1 %v7, %v9
  %v64 = add i1 %v64.m, %v11
  %v65.b = zext i1 %v64 to i8
  store i8 %v65.b, ptr %v63, align 1
  br label %loop5.latch
loop5.latch:
  %v5.next = add i32 %v5, 1
  br label %loop5
loop5.exit:
  ret void
}

attributes #0 = { nounwind "frame-pointer"="none" }
