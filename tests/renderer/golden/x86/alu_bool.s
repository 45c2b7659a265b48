; fusegrad x86-64 kernel alu_bool
alu_bool:
     0: 53                             push rbx
     1: 55                             push rbp
     2: 4154                           push r12
     4: 4155                           push r13
     6: 4156                           push r14
     8: 4157                           push r15
     a: 4881ecf8000000                 sub rsp, 0xf8
    11: 48893c24                       mov qword ptr [rsp], rdi
    15: 4889742408                     mov qword ptr [rsp + 8], rsi
    1a: 4889542410                     mov qword ptr [rsp + 0x10], rdx
    1f: 48894c2418                     mov qword ptr [rsp + 0x18], rcx
    24: 4c89442420                     mov qword ptr [rsp + 0x20], r8
    29: 4c894c2428                     mov qword ptr [rsp + 0x28], r9
    2e: 4c8b1424                       mov r10, qword ptr [rsp]
    32: 4c89542430                     mov qword ptr [rsp + 0x30], r10
    37: 488b7c2408                     mov rdi, qword ptr [rsp + 8]
    3c: 4c8b442410                     mov r8, qword ptr [rsp + 0x10]
    41: 4c8b4c2418                     mov r9, qword ptr [rsp + 0x18]
    46: bb00000000                     mov ebx, 0
.Lloop1:
    4b: 4883fb04                       cmp rbx, 4
    4f: 0f8d1a010000                   jge .Lexit2
    55: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    5a: 410fb62c1a                     movzx ebp, byte ptr [r10 + rbx]
    5f: 440fb6241f                     movzx r12d, byte ptr [rdi + rbx]
    64: 450fb62c18                     movzx r13d, byte ptr [r8 + rbx]
    69: 450fb63419                     movzx r14d, byte ptr [r9 + rbx]
    6e: 4c8b7c2420                     mov r15, qword ptr [rsp + 0x20]
    73: 4889ee                         mov rsi, rbp
    76: 4c09e6                         or rsi, r12
    79: 4188341f                       mov byte ptr [r15 + rbx], sil
    7d: 488b742428                     mov rsi, qword ptr [rsp + 0x28]
    82: 4989ef                         mov r15, rbp
    85: 4d31e7                         xor r15, r12
    88: 44883c1e                       mov byte ptr [rsi + rbx], r15b
    8c: 488bb42430010000               mov rsi, qword ptr [rsp + 0x130]
    94: 4989ef                         mov r15, rbp
    97: 4d21e7                         and r15, r12
    9a: 44883c1e                       mov byte ptr [rsi + rbx], r15b
    9e: 488bb42438010000               mov rsi, qword ptr [rsp + 0x138]
    a6: 4989ef                         mov r15, rbp
    a9: 4d21e7                         and r15, r12
    ac: 44883c1e                       mov byte ptr [rsi + rbx], r15b
    b0: 488bb42440010000               mov rsi, qword ptr [rsp + 0x140]
    b8: 4989ef                         mov r15, rbp
    bb: 4d09e7                         or r15, r12
    be: 44883c1e                       mov byte ptr [rsi + rbx], r15b
    c2: 488bb42448010000               mov rsi, qword ptr [rsp + 0x148]
    ca: 4989ef                         mov r15, rbp
    cd: 4d31e7                         xor r15, r12
    d0: 44883c1e                       mov byte ptr [rsi + rbx], r15b
    d4: 488bb42450010000               mov rsi, qword ptr [rsp + 0x150]
    dc: 4989ef                         mov r15, rbp
    df: 4d09e7                         or r15, r12
    e2: 44883c1e                       mov byte ptr [rsi + rbx], r15b
    e6: 488bb42458010000               mov rsi, qword ptr [rsp + 0x158]
    ee: 4c39e5                         cmp rbp, r12
    f1: 410f92c7                       setb r15b
    f5: 450fb6ff                       movzx r15d, r15b
    f9: 44883c1e                       mov byte ptr [rsi + rbx], r15b
    fd: 488bb42460010000               mov rsi, qword ptr [rsp + 0x160]
   105: 4c39e5                         cmp rbp, r12
   108: 410f95c7                       setne r15b
   10c: 450fb6ff                       movzx r15d, r15b
   110: 44883c1e                       mov byte ptr [rsi + rbx], r15b
   114: 488bb42468010000               mov rsi, qword ptr [rsp + 0x168]
   11c: 4c39e5                         cmp rbp, r12
   11f: 410f94c7                       sete r15b
   123: 450fb6ff                       movzx r15d, r15b
   127: 44883c1e                       mov byte ptr [rsi + rbx], r15b
   12b: 488bb42470010000               mov rsi, qword ptr [rsp + 0x170]
   133: 4989ef                         mov r15, rbp
   136: 4183f701                       xor r15d, 1
   13a: 44883c1e                       mov byte ptr [rsi + rbx], r15b
   13e: 488bb42478010000               mov rsi, qword ptr [rsp + 0x178]
   146: 4d89e7                         mov r15, r12
   149: 4585f6                         test r14d, r14d
   14c: 4c0f45fd                       cmovne r15, rbp
   150: 44883c1e                       mov byte ptr [rsi + rbx], r15b
   154: 488bb42480010000               mov rsi, qword ptr [rsp + 0x180]
   15c: 4c21e5                         and rbp, r12
   15f: 4c09ed                         or rbp, r13
   162: 40882c1e                       mov byte ptr [rsi + rbx], bpl
   166: 4883c301                       add rbx, 1
   16a: e9dcfeffff                     jmp .Lloop1
.Lexit2:
   16f: c5f877                         vzeroupper
   172: 4881c4f8000000                 add rsp, 0xf8
   179: 415f                           pop r15
   17b: 415e                           pop r14
   17d: 415d                           pop r13
   17f: 415c                           pop r12
   181: 5d                             pop rbp
   182: 5b                             pop rbx
   183: c3                             ret
