; fusegrad x86-64 kernel alu_int64
alu_int64:
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
    5d: 0f8d57020000                   jge .Lexit2
    63: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    68: 4a8b2cd6                       mov rbp, qword ptr [rsi + r10*8]
    6c: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    71: 4e8b24d7                       mov r12, qword ptr [rdi + r10*8]
    75: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    7a: 4f8b2cd0                       mov r13, qword ptr [r8 + r10*8]
    7e: 4c8b542450                     mov r10, qword ptr [rsp + 0x50]
    83: 4c8b5c2430                     mov r11, qword ptr [rsp + 0x30]
    88: 470fb6341a                     movzx r14d, byte ptr [r10 + r11]
    8d: 4c8b7c2420                     mov r15, qword ptr [rsp + 0x20]
    92: 4889eb                         mov rbx, rbp
    95: 4c01e3                         add rbx, r12
    98: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    9d: 4b891cd7                       mov qword ptr [r15 + r10*8], rbx
    a1: 488b5c2428                     mov rbx, qword ptr [rsp + 0x28]
    a6: 4989ef                         mov r15, rbp
    a9: 4d29e7                         sub r15, r12
    ac: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    b1: 4e893cd3                       mov qword ptr [rbx + r10*8], r15
    b5: 488b9c2450010000               mov rbx, qword ptr [rsp + 0x150]
    bd: 4989ef                         mov r15, rbp
    c0: 4d0faffc                       imul r15, r12
    c4: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    c9: 4e893cd3                       mov qword ptr [rbx + r10*8], r15
    cd: 488b9c2458010000               mov rbx, qword ptr [rsp + 0x158]
    d5: 4d85e4                         test r12, r12
    d8: 0f8425000000                   je .Ldivzero3
    de: 4983fcff                       cmp r12, -1
    e2: 0f8410000000                   je .Ldivneg5
    e8: 4889e8                         mov rax, rbp
    eb: 4899                           cqo
    ed: 49f7fc                         idiv r12
    f0: 4989c7                         mov r15, rax
    f3: e911000000                     jmp .Ldivdone4
.Ldivneg5:
    f8: 4989ef                         mov r15, rbp
    fb: 49f7df                         neg r15
    fe: e906000000                     jmp .Ldivdone4
.Ldivzero3:
   103: 41bf00000000                   mov r15d, 0
.Ldivdone4:
   109: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   10e: 4e893cd3                       mov qword ptr [rbx + r10*8], r15
   112: 488b9c2460010000               mov rbx, qword ptr [rsp + 0x160]
   11a: 4d85e4                         test r12, r12
   11d: 0f841a000000                   je .Ldivzero6
   123: 4983fcff                       cmp r12, -1
   127: 0f8410000000                   je .Ldivneg8
   12d: 4889e8                         mov rax, rbp
   130: 4899                           cqo
   132: 49f7fc                         idiv r12
   135: 4989d7                         mov r15, rdx
   138: e906000000                     jmp .Ldivdone7
.Ldivneg8:
.Ldivzero6:
   13d: 41bf00000000                   mov r15d, 0
.Ldivdone7:
   143: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   148: 4e893cd3                       mov qword ptr [rbx + r10*8], r15
   14c: 488b9c2468010000               mov rbx, qword ptr [rsp + 0x168]
   154: 4989ef                         mov r15, rbp
   157: 4d39e7                         cmp r15, r12
   15a: 4d0f4cfc                       cmovl r15, r12
   15e: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   163: 4e893cd3                       mov qword ptr [rbx + r10*8], r15
   167: 488b9c2470010000               mov rbx, qword ptr [rsp + 0x170]
   16f: 4989ef                         mov r15, rbp
   172: 4c89e1                         mov rcx, r12
   175: 49d3e7                         shl r15, cl
   178: 41b900000000                   mov r9d, 0
   17e: 4883f940                       cmp rcx, 0x40
   182: 4d0f43f9                       cmovae r15, r9
   186: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   18b: 4e893cd3                       mov qword ptr [rbx + r10*8], r15
   18f: 4c8b8c2478010000               mov r9, qword ptr [rsp + 0x178]
   197: 4889eb                         mov rbx, rbp
   19a: 4c89e1                         mov rcx, r12
   19d: 41bf3f000000                   mov r15d, 0x3f
   1a3: 4c39f9                         cmp rcx, r15
   1a6: 490f47cf                       cmova rcx, r15
   1aa: 48d3fb                         sar rbx, cl
   1ad: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1b2: 4b891cd1                       mov qword ptr [r9 + r10*8], rbx
   1b6: 4c8b8c2480010000               mov r9, qword ptr [rsp + 0x180]
   1be: 4889eb                         mov rbx, rbp
   1c1: 4c21e3                         and rbx, r12
   1c4: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1c9: 4b891cd1                       mov qword ptr [r9 + r10*8], rbx
   1cd: 4c8b8c2488010000               mov r9, qword ptr [rsp + 0x188]
   1d5: 4889eb                         mov rbx, rbp
   1d8: 4c09e3                         or rbx, r12
   1db: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1e0: 4b891cd1                       mov qword ptr [r9 + r10*8], rbx
   1e4: 4c8b8c2490010000               mov r9, qword ptr [rsp + 0x190]
   1ec: 4889eb                         mov rbx, rbp
   1ef: 4c31e3                         xor rbx, r12
   1f2: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1f7: 4b891cd1                       mov qword ptr [r9 + r10*8], rbx
   1fb: 4c8b8c2498010000               mov r9, qword ptr [rsp + 0x198]
   203: 4c39e5                         cmp rbp, r12
   206: 0f9cc3                         setl bl
   209: 0fb6db                         movzx ebx, bl
   20c: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   211: 43881c11                       mov byte ptr [r9 + r10], bl
   215: 4c8b8c24a0010000               mov r9, qword ptr [rsp + 0x1a0]
   21d: 4c39e5                         cmp rbp, r12
   220: 0f95c3                         setne bl
   223: 0fb6db                         movzx ebx, bl
   226: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   22b: 43881c11                       mov byte ptr [r9 + r10], bl
   22f: 4c8b8c24a8010000               mov r9, qword ptr [rsp + 0x1a8]
   237: 4c39e5                         cmp rbp, r12
   23a: 0f94c3                         sete bl
   23d: 0fb6db                         movzx ebx, bl
   240: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   245: 43881c11                       mov byte ptr [r9 + r10], bl
   249: 4c8b8c24b0010000               mov r9, qword ptr [rsp + 0x1b0]
   251: 4889eb                         mov rbx, rbp
   254: 48f7db                         neg rbx
   257: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   25c: 4b891cd1                       mov qword ptr [r9 + r10*8], rbx
   260: 4c8b8c24b8010000               mov r9, qword ptr [rsp + 0x1b8]
   268: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   26d: 4b892cd1                       mov qword ptr [r9 + r10*8], rbp
   271: 4c8b8c24c0010000               mov r9, qword ptr [rsp + 0x1c0]
   279: 4c89e3                         mov rbx, r12
   27c: 4585f6                         test r14d, r14d
   27f: 480f45dd                       cmovne rbx, rbp
   283: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   288: 4b891cd1                       mov qword ptr [r9 + r10*8], rbx
   28c: 4c8b8c24c8010000               mov r9, qword ptr [rsp + 0x1c8]
   294: 4889eb                         mov rbx, rbp
   297: 490fafdc                       imul rbx, r12
   29b: 4c01eb                         add rbx, r13
   29e: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   2a3: 4b891cd1                       mov qword ptr [r9 + r10*8], rbx
   2a7: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   2ac: 4983c201                       add r10, 1
   2b0: 4c89542430                     mov qword ptr [rsp + 0x30], r10
   2b5: e997fdffff                     jmp .Lloop1
.Lexit2:
   2ba: c5f877                         vzeroupper
   2bd: 4881c418010000                 add rsp, 0x118
   2c4: 415f                           pop r15
   2c6: 415e                           pop r14
   2c8: 415d                           pop r13
   2ca: 415c                           pop r12
   2cc: 5d                             pop rbp
   2cd: 5b                             pop rbx
   2ce: c3                             ret
