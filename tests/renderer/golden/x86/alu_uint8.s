; fusegrad x86-64 kernel alu_uint8
alu_uint8:
     0: 53                             push rbx
     1: 55                             push rbp
     2: 4154                           push r12
     4: 4155                           push r13
     6: 4156                           push r14
     8: 4157                           push r15
     a: 4883ec48                       sub rsp, 0x48
     e: 48893c24                       mov qword ptr [rsp], rdi
    12: 4889742408                     mov qword ptr [rsp + 8], rsi
    17: 4889542410                     mov qword ptr [rsp + 0x10], rdx
    1c: 48894c2418                     mov qword ptr [rsp + 0x18], rcx
    21: 4c89442420                     mov qword ptr [rsp + 0x20], r8
    26: 4c894c2428                     mov qword ptr [rsp + 0x28], r9
    2b: 488b3424                       mov rsi, qword ptr [rsp]
    2f: 488b7c2408                     mov rdi, qword ptr [rsp + 8]
    34: 4c8b442410                     mov r8, qword ptr [rsp + 0x10]
    39: 4c8b542418                     mov r10, qword ptr [rsp + 0x18]
    3e: 4c89542438                     mov qword ptr [rsp + 0x38], r10
    43: 41ba00000000                   mov r10d, 0
    49: 4c89542430                     mov qword ptr [rsp + 0x30], r10
.Lloop1:
    4e: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    53: 4981fa21010000                 cmp r10, 0x121
    5a: 0f8d5c020000                   jge .Lexit2
    60: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    65: 420fb62c16                     movzx ebp, byte ptr [rsi + r10]
    6a: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    6f: 460fb62417                     movzx r12d, byte ptr [rdi + r10]
    74: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    79: 470fb62c10                     movzx r13d, byte ptr [r8 + r10]
    7e: 4c8b542438                     mov r10, qword ptr [rsp + 0x38]
    83: 4c8b5c2430                     mov r11, qword ptr [rsp + 0x30]
    88: 470fb6341a                     movzx r14d, byte ptr [r10 + r11]
    8d: 4c8b7c2420                     mov r15, qword ptr [rsp + 0x20]
    92: 4889eb                         mov rbx, rbp
    95: 4401e3                         add ebx, r12d
    98: 0fb6db                         movzx ebx, bl
    9b: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    a0: 43881c17                       mov byte ptr [r15 + r10], bl
    a4: 488b5c2428                     mov rbx, qword ptr [rsp + 0x28]
    a9: 4989ef                         mov r15, rbp
    ac: 4529e7                         sub r15d, r12d
    af: 450fb6ff                       movzx r15d, r15b
    b3: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    b8: 46883c13                       mov byte ptr [rbx + r10], r15b
    bc: 488b9c2480000000               mov rbx, qword ptr [rsp + 0x80]
    c4: 4989ef                         mov r15, rbp
    c7: 450faffc                       imul r15d, r12d
    cb: 450fb6ff                       movzx r15d, r15b
    cf: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    d4: 46883c13                       mov byte ptr [rbx + r10], r15b
    d8: 488b9c2488000000               mov rbx, qword ptr [rsp + 0x88]
    e0: 4585e4                         test r12d, r12d
    e3: 0f8410000000                   je .Ldivzero3
    e9: 4889e8                         mov rax, rbp
    ec: 31d2                           xor edx, edx
    ee: 41f7f4                         div r12d
    f1: 4989c7                         mov r15, rax
    f4: e906000000                     jmp .Ldivdone4
.Ldivzero3:
    f9: 41bf00000000                   mov r15d, 0
.Ldivdone4:
    ff: 450fb6ff                       movzx r15d, r15b
   103: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   108: 46883c13                       mov byte ptr [rbx + r10], r15b
   10c: 488b9c2490000000               mov rbx, qword ptr [rsp + 0x90]
   114: 4585e4                         test r12d, r12d
   117: 0f8410000000                   je .Ldivzero6
   11d: 4889e8                         mov rax, rbp
   120: 31d2                           xor edx, edx
   122: 41f7f4                         div r12d
   125: 4989d7                         mov r15, rdx
   128: e906000000                     jmp .Ldivdone7
.Ldivzero6:
   12d: 41bf00000000                   mov r15d, 0
.Ldivdone7:
   133: 450fb6ff                       movzx r15d, r15b
   137: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   13c: 46883c13                       mov byte ptr [rbx + r10], r15b
   140: 488b9c2498000000               mov rbx, qword ptr [rsp + 0x98]
   148: 4989ef                         mov r15, rbp
   14b: 4d39e7                         cmp r15, r12
   14e: 4d0f42fc                       cmovb r15, r12
   152: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   157: 46883c13                       mov byte ptr [rbx + r10], r15b
   15b: 488b9c24a0000000               mov rbx, qword ptr [rsp + 0xa0]
   163: 4989ef                         mov r15, rbp
   166: 4c89e1                         mov rcx, r12
   169: 49d3e7                         shl r15, cl
   16c: 41b900000000                   mov r9d, 0
   172: 4883f908                       cmp rcx, 8
   176: 4d0f43f9                       cmovae r15, r9
   17a: 450fb6ff                       movzx r15d, r15b
   17e: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   183: 46883c13                       mov byte ptr [rbx + r10], r15b
   187: 4c8b8c24a8000000               mov r9, qword ptr [rsp + 0xa8]
   18f: 4889eb                         mov rbx, rbp
   192: 4c89e1                         mov rcx, r12
   195: 48d3eb                         shr rbx, cl
   198: 41bf00000000                   mov r15d, 0
   19e: 4883f908                       cmp rcx, 8
   1a2: 490f43df                       cmovae rbx, r15
   1a6: 0fb6db                         movzx ebx, bl
   1a9: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1ae: 43881c11                       mov byte ptr [r9 + r10], bl
   1b2: 4c8b8c24b0000000               mov r9, qword ptr [rsp + 0xb0]
   1ba: 4889eb                         mov rbx, rbp
   1bd: 4c21e3                         and rbx, r12
   1c0: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1c5: 43881c11                       mov byte ptr [r9 + r10], bl
   1c9: 4c8b8c24b8000000               mov r9, qword ptr [rsp + 0xb8]
   1d1: 4889eb                         mov rbx, rbp
   1d4: 4c09e3                         or rbx, r12
   1d7: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1dc: 43881c11                       mov byte ptr [r9 + r10], bl
   1e0: 4c8b8c24c0000000               mov r9, qword ptr [rsp + 0xc0]
   1e8: 4889eb                         mov rbx, rbp
   1eb: 4c31e3                         xor rbx, r12
   1ee: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1f3: 43881c11                       mov byte ptr [r9 + r10], bl
   1f7: 4c8b8c24c8000000               mov r9, qword ptr [rsp + 0xc8]
   1ff: 4c39e5                         cmp rbp, r12
   202: 0f92c3                         setb bl
   205: 0fb6db                         movzx ebx, bl
   208: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   20d: 43881c11                       mov byte ptr [r9 + r10], bl
   211: 4c8b8c24d0000000               mov r9, qword ptr [rsp + 0xd0]
   219: 4c39e5                         cmp rbp, r12
   21c: 0f95c3                         setne bl
   21f: 0fb6db                         movzx ebx, bl
   222: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   227: 43881c11                       mov byte ptr [r9 + r10], bl
   22b: 4c8b8c24d8000000               mov r9, qword ptr [rsp + 0xd8]
   233: 4c39e5                         cmp rbp, r12
   236: 0f94c3                         sete bl
   239: 0fb6db                         movzx ebx, bl
   23c: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   241: 43881c11                       mov byte ptr [r9 + r10], bl
   245: 4c8b8c24e0000000               mov r9, qword ptr [rsp + 0xe0]
   24d: 4889eb                         mov rbx, rbp
   250: 48f7db                         neg rbx
   253: 0fb6db                         movzx ebx, bl
   256: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   25b: 43881c11                       mov byte ptr [r9 + r10], bl
   25f: 4c8b8c24e8000000               mov r9, qword ptr [rsp + 0xe8]
   267: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   26c: 43882c11                       mov byte ptr [r9 + r10], bpl
   270: 4c8b8c24f0000000               mov r9, qword ptr [rsp + 0xf0]
   278: 4c89e3                         mov rbx, r12
   27b: 4585f6                         test r14d, r14d
   27e: 480f45dd                       cmovne rbx, rbp
   282: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   287: 43881c11                       mov byte ptr [r9 + r10], bl
   28b: 4c8b8c24f8000000               mov r9, qword ptr [rsp + 0xf8]
   293: 4889eb                         mov rbx, rbp
   296: 410fafdc                       imul ebx, r12d
   29a: 4401eb                         add ebx, r13d
   29d: 0fb6db                         movzx ebx, bl
   2a0: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   2a5: 43881c11                       mov byte ptr [r9 + r10], bl
   2a9: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   2ae: 4983c201                       add r10, 1
   2b2: 4c89542430                     mov qword ptr [rsp + 0x30], r10
   2b7: e992fdffff                     jmp .Lloop1
.Lexit2:
   2bc: 4883c448                       add rsp, 0x48
   2c0: 415f                           pop r15
   2c2: 415e                           pop r14
   2c4: 415d                           pop r13
   2c6: 415c                           pop r12
   2c8: 5d                             pop rbp
   2c9: 5b                             pop rbx
   2ca: c3                             ret
