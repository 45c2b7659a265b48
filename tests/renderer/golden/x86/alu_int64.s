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
    2e: 4c8b1424                       mov r10, qword ptr [rsp]
    32: 4c89542430                     mov qword ptr [rsp + 0x30], r10
    37: 4c8b542408                     mov r10, qword ptr [rsp + 8]
    3c: 4c89542450                     mov qword ptr [rsp + 0x50], r10
    41: 4c8b442410                     mov r8, qword ptr [rsp + 0x10]
    46: 4c8b4c2418                     mov r9, qword ptr [rsp + 0x18]
    4b: bb00000000                     mov ebx, 0
.Lloop1:
    50: 4881fb21010000                 cmp rbx, 0x121
    57: 0f8de8010000                   jge .Lexit2
    5d: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    62: 498b2cda                       mov rbp, qword ptr [r10 + rbx*8]
    66: 4c8b542450                     mov r10, qword ptr [rsp + 0x50]
    6b: 4d8b24da                       mov r12, qword ptr [r10 + rbx*8]
    6f: 4d8b2cd8                       mov r13, qword ptr [r8 + rbx*8]
    73: 450fb63419                     movzx r14d, byte ptr [r9 + rbx]
    78: 4c8b7c2420                     mov r15, qword ptr [rsp + 0x20]
    7d: 4a8d742500                     lea rsi, [rbp + r12]
    82: 498934df                       mov qword ptr [r15 + rbx*8], rsi
    86: 488b742428                     mov rsi, qword ptr [rsp + 0x28]
    8b: 4989ef                         mov r15, rbp
    8e: 4d29e7                         sub r15, r12
    91: 4c893cde                       mov qword ptr [rsi + rbx*8], r15
    95: 488bb42450010000               mov rsi, qword ptr [rsp + 0x150]
    9d: 4989ef                         mov r15, rbp
    a0: 4d0faffc                       imul r15, r12
    a4: 4c893cde                       mov qword ptr [rsi + rbx*8], r15
    a8: 488bb42458010000               mov rsi, qword ptr [rsp + 0x158]
    b0: 4d85e4                         test r12, r12
    b3: 0f8425000000                   je .Ldivzero3
    b9: 4983fcff                       cmp r12, -1
    bd: 0f8410000000                   je .Ldivneg5
    c3: 4889e8                         mov rax, rbp
    c6: 4899                           cqo
    c8: 49f7fc                         idiv r12
    cb: 4989c7                         mov r15, rax
    ce: e911000000                     jmp .Ldivdone4
.Ldivneg5:
    d3: 4989ef                         mov r15, rbp
    d6: 49f7df                         neg r15
    d9: e906000000                     jmp .Ldivdone4
.Ldivzero3:
    de: 41bf00000000                   mov r15d, 0
.Ldivdone4:
    e4: 4c893cde                       mov qword ptr [rsi + rbx*8], r15
    e8: 488bb42460010000               mov rsi, qword ptr [rsp + 0x160]
    f0: 4d85e4                         test r12, r12
    f3: 0f841a000000                   je .Ldivzero6
    f9: 4983fcff                       cmp r12, -1
    fd: 0f8410000000                   je .Ldivneg8
   103: 4889e8                         mov rax, rbp
   106: 4899                           cqo
   108: 49f7fc                         idiv r12
   10b: 4989d7                         mov r15, rdx
   10e: e906000000                     jmp .Ldivdone7
.Ldivneg8:
.Ldivzero6:
   113: 41bf00000000                   mov r15d, 0
.Ldivdone7:
   119: 4c893cde                       mov qword ptr [rsi + rbx*8], r15
   11d: 488bb42468010000               mov rsi, qword ptr [rsp + 0x168]
   125: 4989ef                         mov r15, rbp
   128: 4d39e7                         cmp r15, r12
   12b: 4d0f4cfc                       cmovl r15, r12
   12f: 4c893cde                       mov qword ptr [rsi + rbx*8], r15
   133: 488bb42470010000               mov rsi, qword ptr [rsp + 0x170]
   13b: 4989ef                         mov r15, rbp
   13e: 4c89e1                         mov rcx, r12
   141: 49d3e7                         shl r15, cl
   144: bf00000000                     mov edi, 0
   149: 4883f940                       cmp rcx, 0x40
   14d: 4c0f43ff                       cmovae r15, rdi
   151: 4c893cde                       mov qword ptr [rsi + rbx*8], r15
   155: 488bb42478010000               mov rsi, qword ptr [rsp + 0x178]
   15d: 4889ef                         mov rdi, rbp
   160: 4c89e1                         mov rcx, r12
   163: 41bf3f000000                   mov r15d, 0x3f
   169: 4c39f9                         cmp rcx, r15
   16c: 490f47cf                       cmova rcx, r15
   170: 48d3ff                         sar rdi, cl
   173: 48893cde                       mov qword ptr [rsi + rbx*8], rdi
   177: 488bb42480010000               mov rsi, qword ptr [rsp + 0x180]
   17f: 4889ef                         mov rdi, rbp
   182: 4c21e7                         and rdi, r12
   185: 48893cde                       mov qword ptr [rsi + rbx*8], rdi
   189: 488bb42488010000               mov rsi, qword ptr [rsp + 0x188]
   191: 4889ef                         mov rdi, rbp
   194: 4c09e7                         or rdi, r12
   197: 48893cde                       mov qword ptr [rsi + rbx*8], rdi
   19b: 488bb42490010000               mov rsi, qword ptr [rsp + 0x190]
   1a3: 4889ef                         mov rdi, rbp
   1a6: 4c31e7                         xor rdi, r12
   1a9: 48893cde                       mov qword ptr [rsi + rbx*8], rdi
   1ad: 488bb42498010000               mov rsi, qword ptr [rsp + 0x198]
   1b5: 4c39e5                         cmp rbp, r12
   1b8: 400f9cc7                       setl dil
   1bc: 400fb6ff                       movzx edi, dil
   1c0: 40883c1e                       mov byte ptr [rsi + rbx], dil
   1c4: 488bb424a0010000               mov rsi, qword ptr [rsp + 0x1a0]
   1cc: 4c39e5                         cmp rbp, r12
   1cf: 400f95c7                       setne dil
   1d3: 400fb6ff                       movzx edi, dil
   1d7: 40883c1e                       mov byte ptr [rsi + rbx], dil
   1db: 488bb424a8010000               mov rsi, qword ptr [rsp + 0x1a8]
   1e3: 4c39e5                         cmp rbp, r12
   1e6: 400f94c7                       sete dil
   1ea: 400fb6ff                       movzx edi, dil
   1ee: 40883c1e                       mov byte ptr [rsi + rbx], dil
   1f2: 488bb424b0010000               mov rsi, qword ptr [rsp + 0x1b0]
   1fa: 4889ef                         mov rdi, rbp
   1fd: 48f7df                         neg rdi
   200: 48893cde                       mov qword ptr [rsi + rbx*8], rdi
   204: 488bb424b8010000               mov rsi, qword ptr [rsp + 0x1b8]
   20c: 48892cde                       mov qword ptr [rsi + rbx*8], rbp
   210: 488bb424c0010000               mov rsi, qword ptr [rsp + 0x1c0]
   218: 4c89e7                         mov rdi, r12
   21b: 4585f6                         test r14d, r14d
   21e: 480f45fd                       cmovne rdi, rbp
   222: 48893cde                       mov qword ptr [rsi + rbx*8], rdi
   226: 488bb424c8010000               mov rsi, qword ptr [rsp + 0x1c8]
   22e: 4889ef                         mov rdi, rbp
   231: 490faffc                       imul rdi, r12
   235: 4c01ef                         add rdi, r13
   238: 48893cde                       mov qword ptr [rsi + rbx*8], rdi
   23c: 4883c301                       add rbx, 1
   240: e90bfeffff                     jmp .Lloop1
.Lexit2:
   245: c5f877                         vzeroupper
   248: 4881c418010000                 add rsp, 0x118
   24f: 415f                           pop r15
   251: 415e                           pop r14
   253: 415d                           pop r13
   255: 415c                           pop r12
   257: 5d                             pop rbp
   258: 5b                             pop rbx
   259: c3                             ret
