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
    5d: 0f8d56020000                   jge .Lexit2
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
    92: 4a8d5c2500                     lea rbx, [rbp + r12]
    97: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    9c: 4b891cd7                       mov qword ptr [r15 + r10*8], rbx
    a0: 488b5c2428                     mov rbx, qword ptr [rsp + 0x28]
    a5: 4989ef                         mov r15, rbp
    a8: 4d29e7                         sub r15, r12
    ab: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    b0: 4e893cd3                       mov qword ptr [rbx + r10*8], r15
    b4: 488b9c2450010000               mov rbx, qword ptr [rsp + 0x150]
    bc: 4989ef                         mov r15, rbp
    bf: 4d0faffc                       imul r15, r12
    c3: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    c8: 4e893cd3                       mov qword ptr [rbx + r10*8], r15
    cc: 488b9c2458010000               mov rbx, qword ptr [rsp + 0x158]
    d4: 4d85e4                         test r12, r12
    d7: 0f8425000000                   je .Ldivzero3
    dd: 4983fcff                       cmp r12, -1
    e1: 0f8410000000                   je .Ldivneg5
    e7: 4889e8                         mov rax, rbp
    ea: 4899                           cqo
    ec: 49f7fc                         idiv r12
    ef: 4989c7                         mov r15, rax
    f2: e911000000                     jmp .Ldivdone4
.Ldivneg5:
    f7: 4989ef                         mov r15, rbp
    fa: 49f7df                         neg r15
    fd: e906000000                     jmp .Ldivdone4
.Ldivzero3:
   102: 41bf00000000                   mov r15d, 0
.Ldivdone4:
   108: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   10d: 4e893cd3                       mov qword ptr [rbx + r10*8], r15
   111: 488b9c2460010000               mov rbx, qword ptr [rsp + 0x160]
   119: 4d85e4                         test r12, r12
   11c: 0f841a000000                   je .Ldivzero6
   122: 4983fcff                       cmp r12, -1
   126: 0f8410000000                   je .Ldivneg8
   12c: 4889e8                         mov rax, rbp
   12f: 4899                           cqo
   131: 49f7fc                         idiv r12
   134: 4989d7                         mov r15, rdx
   137: e906000000                     jmp .Ldivdone7
.Ldivneg8:
.Ldivzero6:
   13c: 41bf00000000                   mov r15d, 0
.Ldivdone7:
   142: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   147: 4e893cd3                       mov qword ptr [rbx + r10*8], r15
   14b: 488b9c2468010000               mov rbx, qword ptr [rsp + 0x168]
   153: 4989ef                         mov r15, rbp
   156: 4d39e7                         cmp r15, r12
   159: 4d0f4cfc                       cmovl r15, r12
   15d: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   162: 4e893cd3                       mov qword ptr [rbx + r10*8], r15
   166: 488b9c2470010000               mov rbx, qword ptr [rsp + 0x170]
   16e: 4989ef                         mov r15, rbp
   171: 4c89e1                         mov rcx, r12
   174: 49d3e7                         shl r15, cl
   177: 41b900000000                   mov r9d, 0
   17d: 4883f940                       cmp rcx, 0x40
   181: 4d0f43f9                       cmovae r15, r9
   185: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   18a: 4e893cd3                       mov qword ptr [rbx + r10*8], r15
   18e: 4c8b8c2478010000               mov r9, qword ptr [rsp + 0x178]
   196: 4889eb                         mov rbx, rbp
   199: 4c89e1                         mov rcx, r12
   19c: 41bf3f000000                   mov r15d, 0x3f
   1a2: 4c39f9                         cmp rcx, r15
   1a5: 490f47cf                       cmova rcx, r15
   1a9: 48d3fb                         sar rbx, cl
   1ac: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1b1: 4b891cd1                       mov qword ptr [r9 + r10*8], rbx
   1b5: 4c8b8c2480010000               mov r9, qword ptr [rsp + 0x180]
   1bd: 4889eb                         mov rbx, rbp
   1c0: 4c21e3                         and rbx, r12
   1c3: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1c8: 4b891cd1                       mov qword ptr [r9 + r10*8], rbx
   1cc: 4c8b8c2488010000               mov r9, qword ptr [rsp + 0x188]
   1d4: 4889eb                         mov rbx, rbp
   1d7: 4c09e3                         or rbx, r12
   1da: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1df: 4b891cd1                       mov qword ptr [r9 + r10*8], rbx
   1e3: 4c8b8c2490010000               mov r9, qword ptr [rsp + 0x190]
   1eb: 4889eb                         mov rbx, rbp
   1ee: 4c31e3                         xor rbx, r12
   1f1: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1f6: 4b891cd1                       mov qword ptr [r9 + r10*8], rbx
   1fa: 4c8b8c2498010000               mov r9, qword ptr [rsp + 0x198]
   202: 4c39e5                         cmp rbp, r12
   205: 0f9cc3                         setl bl
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
   256: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   25b: 4b891cd1                       mov qword ptr [r9 + r10*8], rbx
   25f: 4c8b8c24b8010000               mov r9, qword ptr [rsp + 0x1b8]
   267: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   26c: 4b892cd1                       mov qword ptr [r9 + r10*8], rbp
   270: 4c8b8c24c0010000               mov r9, qword ptr [rsp + 0x1c0]
   278: 4c89e3                         mov rbx, r12
   27b: 4585f6                         test r14d, r14d
   27e: 480f45dd                       cmovne rbx, rbp
   282: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   287: 4b891cd1                       mov qword ptr [r9 + r10*8], rbx
   28b: 4c8b8c24c8010000               mov r9, qword ptr [rsp + 0x1c8]
   293: 4889eb                         mov rbx, rbp
   296: 490fafdc                       imul rbx, r12
   29a: 4c01eb                         add rbx, r13
   29d: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   2a2: 4b891cd1                       mov qword ptr [r9 + r10*8], rbx
   2a6: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   2ab: 4983c201                       add r10, 1
   2af: 4c89542430                     mov qword ptr [rsp + 0x30], r10
   2b4: e998fdffff                     jmp .Lloop1
.Lexit2:
   2b9: c5f877                         vzeroupper
   2bc: 4881c418010000                 add rsp, 0x118
   2c3: 415f                           pop r15
   2c5: 415e                           pop r14
   2c7: 415d                           pop r13
   2c9: 415c                           pop r12
   2cb: 5d                             pop rbp
   2cc: 5b                             pop rbx
   2cd: c3                             ret
