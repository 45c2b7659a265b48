; fusegrad x86-64 kernel alu_uint8
alu_uint8:
     0: 53                             push rbx
     1: 55                             push rbp
     2: 4154                           push r12
     4: 4155                           push r13
     6: 4156                           push r14
     8: 4157                           push r15
     a: 4881ec18010000                 sub rsp, 0x118
    11: 48893c24                       mov qword ptr [rsp], rdi
    15: 4889742408                     mov qword ptr [rsp + 8], rsi
    1a: 4889542410                     mov qword ptr [rsp + 0x10], rdx
    1f: 48894c2418                     mov qword ptr [rsp + 0x18], rcx
    24: 4c89442420                     mov qword ptr [rsp + 0x20], r8
    29: 4c894c2428                     mov qword ptr [rsp + 0x28], r9
    2e: 488b3424                       mov rsi, qword ptr [rsp]
    32: 488b7c2408                     mov rdi, qword ptr [rsp + 8]
    37: 4c8b442410                     mov r8, qword ptr [rsp + 0x10]
    3c: 4c8b542418                     mov r10, qword ptr [rsp + 0x18]
    41: 4c89542450                     mov qword ptr [rsp + 0x50], r10
    46: 41ba00000000                   mov r10d, 0
    4c: 4c89542430                     mov qword ptr [rsp + 0x30], r10
.Lloop1:
    51: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    56: 4981fa21010000                 cmp r10, 0x121
    5d: 0f8d5c020000                   jge .Lexit2
    63: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    68: 420fb62c16                     movzx ebp, byte ptr [rsi + r10]
    6d: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    72: 460fb62417                     movzx r12d, byte ptr [rdi + r10]
    77: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    7c: 470fb62c10                     movzx r13d, byte ptr [r8 + r10]
    81: 4c8b542450                     mov r10, qword ptr [rsp + 0x50]
    86: 4c8b5c2430                     mov r11, qword ptr [rsp + 0x30]
    8b: 470fb6341a                     movzx r14d, byte ptr [r10 + r11]
    90: 4c8b7c2420                     mov r15, qword ptr [rsp + 0x20]
    95: 4889eb                         mov rbx, rbp
    98: 4401e3                         add ebx, r12d
    9b: 0fb6db                         movzx ebx, bl
    9e: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    a3: 43881c17                       mov byte ptr [r15 + r10], bl
    a7: 488b5c2428                     mov rbx, qword ptr [rsp + 0x28]
    ac: 4989ef                         mov r15, rbp
    af: 4529e7                         sub r15d, r12d
    b2: 450fb6ff                       movzx r15d, r15b
    b6: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    bb: 46883c13                       mov byte ptr [rbx + r10], r15b
    bf: 488b9c2450010000               mov rbx, qword ptr [rsp + 0x150]
    c7: 4989ef                         mov r15, rbp
    ca: 450faffc                       imul r15d, r12d
    ce: 450fb6ff                       movzx r15d, r15b
    d2: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    d7: 46883c13                       mov byte ptr [rbx + r10], r15b
    db: 488b9c2458010000               mov rbx, qword ptr [rsp + 0x158]
    e3: 4585e4                         test r12d, r12d
    e6: 0f8410000000                   je .Ldivzero3
    ec: 4889e8                         mov rax, rbp
    ef: 31d2                           xor edx, edx
    f1: 41f7f4                         div r12d
    f4: 4989c7                         mov r15, rax
    f7: e906000000                     jmp .Ldivdone4
.Ldivzero3:
    fc: 41bf00000000                   mov r15d, 0
.Ldivdone4:
   102: 450fb6ff                       movzx r15d, r15b
   106: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   10b: 46883c13                       mov byte ptr [rbx + r10], r15b
   10f: 488b9c2460010000               mov rbx, qword ptr [rsp + 0x160]
   117: 4585e4                         test r12d, r12d
   11a: 0f8410000000                   je .Ldivzero6
   120: 4889e8                         mov rax, rbp
   123: 31d2                           xor edx, edx
   125: 41f7f4                         div r12d
   128: 4989d7                         mov r15, rdx
   12b: e906000000                     jmp .Ldivdone7
.Ldivzero6:
   130: 41bf00000000                   mov r15d, 0
.Ldivdone7:
   136: 450fb6ff                       movzx r15d, r15b
   13a: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   13f: 46883c13                       mov byte ptr [rbx + r10], r15b
   143: 488b9c2468010000               mov rbx, qword ptr [rsp + 0x168]
   14b: 4989ef                         mov r15, rbp
   14e: 4d39e7                         cmp r15, r12
   151: 4d0f42fc                       cmovb r15, r12
   155: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   15a: 46883c13                       mov byte ptr [rbx + r10], r15b
   15e: 488b9c2470010000               mov rbx, qword ptr [rsp + 0x170]
   166: 4989ef                         mov r15, rbp
   169: 4c89e1                         mov rcx, r12
   16c: 49d3e7                         shl r15, cl
   16f: 41b900000000                   mov r9d, 0
   175: 4883f908                       cmp rcx, 8
   179: 4d0f43f9                       cmovae r15, r9
   17d: 450fb6ff                       movzx r15d, r15b
   181: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   186: 46883c13                       mov byte ptr [rbx + r10], r15b
   18a: 4c8b8c2478010000               mov r9, qword ptr [rsp + 0x178]
   192: 4889eb                         mov rbx, rbp
   195: 4c89e1                         mov rcx, r12
   198: 48d3eb                         shr rbx, cl
   19b: 41bf00000000                   mov r15d, 0
   1a1: 4883f908                       cmp rcx, 8
   1a5: 490f43df                       cmovae rbx, r15
   1a9: 0fb6db                         movzx ebx, bl
   1ac: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1b1: 43881c11                       mov byte ptr [r9 + r10], bl
   1b5: 4c8b8c2480010000               mov r9, qword ptr [rsp + 0x180]
   1bd: 4889eb                         mov rbx, rbp
   1c0: 4c21e3                         and rbx, r12
   1c3: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1c8: 43881c11                       mov byte ptr [r9 + r10], bl
   1cc: 4c8b8c2488010000               mov r9, qword ptr [rsp + 0x188]
   1d4: 4889eb                         mov rbx, rbp
   1d7: 4c09e3                         or rbx, r12
   1da: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1df: 43881c11                       mov byte ptr [r9 + r10], bl
   1e3: 4c8b8c2490010000               mov r9, qword ptr [rsp + 0x190]
   1eb: 4889eb                         mov rbx, rbp
   1ee: 4c31e3                         xor rbx, r12
   1f1: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1f6: 43881c11                       mov byte ptr [r9 + r10], bl
   1fa: 4c8b8c2498010000               mov r9, qword ptr [rsp + 0x198]
   202: 4c39e5                         cmp rbp, r12
   205: 0f92c3                         setb bl
   208: 0fb6db                         movzx ebx, bl
   20b: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   210: 43881c11                       mov byte ptr [r9 + r10], bl
   214: 4c8b8c24a0010000               mov r9, qword ptr [rsp + 0x1a0]
   21c: 4c39e5                         cmp rbp, r12
   21f: 0f95c3                         setne bl
   222: 0fb6db                         movzx ebx, bl
   225: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   22a: 43881c11                       mov byte ptr [r9 + r10], bl
   22e: 4c8b8c24a8010000               mov r9, qword ptr [rsp + 0x1a8]
   236: 4c39e5                         cmp rbp, r12
   239: 0f94c3                         sete bl
   23c: 0fb6db                         movzx ebx, bl
   23f: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   244: 43881c11                       mov byte ptr [r9 + r10], bl
   248: 4c8b8c24b0010000               mov r9, qword ptr [rsp + 0x1b0]
   250: 4889eb                         mov rbx, rbp
   253: 48f7db                         neg rbx
   256: 0fb6db                         movzx ebx, bl
   259: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   25e: 43881c11                       mov byte ptr [r9 + r10], bl
   262: 4c8b8c24b8010000               mov r9, qword ptr [rsp + 0x1b8]
   26a: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   26f: 43882c11                       mov byte ptr [r9 + r10], bpl
   273: 4c8b8c24c0010000               mov r9, qword ptr [rsp + 0x1c0]
   27b: 4c89e3                         mov rbx, r12
   27e: 4585f6                         test r14d, r14d
   281: 480f45dd                       cmovne rbx, rbp
   285: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   28a: 43881c11                       mov byte ptr [r9 + r10], bl
   28e: 4c8b8c24c8010000               mov r9, qword ptr [rsp + 0x1c8]
   296: 4889eb                         mov rbx, rbp
   299: 410fafdc                       imul ebx, r12d
   29d: 4401eb                         add ebx, r13d
   2a0: 0fb6db                         movzx ebx, bl
   2a3: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   2a8: 43881c11                       mov byte ptr [r9 + r10], bl
   2ac: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   2b1: 4983c201                       add r10, 1
   2b5: 4c89542430                     mov qword ptr [rsp + 0x30], r10
   2ba: e992fdffff                     jmp .Lloop1
.Lexit2:
   2bf: c5f877                         vzeroupper
   2c2: 4881c418010000                 add rsp, 0x118
   2c9: 415f                           pop r15
   2cb: 415e                           pop r14
   2cd: 415d                           pop r13
   2cf: 415c                           pop r12
   2d1: 5d                             pop rbp
   2d2: 5b                             pop rbx
   2d3: c3                             ret
