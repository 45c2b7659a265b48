; fusegrad x86-64 kernel alu_bool
alu_bool:
     0: 53                             push rbx
     1: 55                             push rbp
     2: 4154                           push r12
     4: 4155                           push r13
     6: 4156                           push r14
     8: 4157                           push r15
     a: 4883ec38                       sub rsp, 0x38
     e: 48893c24                       mov qword ptr [rsp], rdi
    12: 4889742408                     mov qword ptr [rsp + 8], rsi
    17: 4889542410                     mov qword ptr [rsp + 0x10], rdx
    1c: 48894c2418                     mov qword ptr [rsp + 0x18], rcx
    21: 4c89442420                     mov qword ptr [rsp + 0x20], r8
    26: 4c894c2428                     mov qword ptr [rsp + 0x28], r9
    2b: 488b3424                       mov rsi, qword ptr [rsp]
    2f: 488b7c2408                     mov rdi, qword ptr [rsp + 8]
    34: 4c8b442410                     mov r8, qword ptr [rsp + 0x10]
    39: 4c8b4c2418                     mov r9, qword ptr [rsp + 0x18]
    3e: 41ba00000000                   mov r10d, 0
    44: 4c89542430                     mov qword ptr [rsp + 0x30], r10
.Lloop1:
    49: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    4e: 4983fa04                       cmp r10, 4
    52: 0f8d71010000                   jge .Lexit2
    58: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    5d: 420fb62c16                     movzx ebp, byte ptr [rsi + r10]
    62: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    67: 460fb62417                     movzx r12d, byte ptr [rdi + r10]
    6c: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    71: 470fb62c10                     movzx r13d, byte ptr [r8 + r10]
    76: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    7b: 470fb63411                     movzx r14d, byte ptr [r9 + r10]
    80: 4c8b7c2420                     mov r15, qword ptr [rsp + 0x20]
    85: 4889eb                         mov rbx, rbp
    88: 4c09e3                         or rbx, r12
    8b: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    90: 43881c17                       mov byte ptr [r15 + r10], bl
    94: 488b5c2428                     mov rbx, qword ptr [rsp + 0x28]
    99: 4989ef                         mov r15, rbp
    9c: 4d31e7                         xor r15, r12
    9f: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    a4: 46883c13                       mov byte ptr [rbx + r10], r15b
    a8: 488b5c2470                     mov rbx, qword ptr [rsp + 0x70]
    ad: 4989ef                         mov r15, rbp
    b0: 4d21e7                         and r15, r12
    b3: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    b8: 46883c13                       mov byte ptr [rbx + r10], r15b
    bc: 488b5c2478                     mov rbx, qword ptr [rsp + 0x78]
    c1: 4989ef                         mov r15, rbp
    c4: 4d21e7                         and r15, r12
    c7: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    cc: 46883c13                       mov byte ptr [rbx + r10], r15b
    d0: 488b9c2480000000               mov rbx, qword ptr [rsp + 0x80]
    d8: 4989ef                         mov r15, rbp
    db: 4d09e7                         or r15, r12
    de: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    e3: 46883c13                       mov byte ptr [rbx + r10], r15b
    e7: 488b9c2488000000               mov rbx, qword ptr [rsp + 0x88]
    ef: 4989ef                         mov r15, rbp
    f2: 4d31e7                         xor r15, r12
    f5: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    fa: 46883c13                       mov byte ptr [rbx + r10], r15b
    fe: 488b9c2490000000               mov rbx, qword ptr [rsp + 0x90]
   106: 4989ef                         mov r15, rbp
   109: 4d09e7                         or r15, r12
   10c: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   111: 46883c13                       mov byte ptr [rbx + r10], r15b
   115: 488b9c2498000000               mov rbx, qword ptr [rsp + 0x98]
   11d: 4c39e5                         cmp rbp, r12
   120: 410f92c7                       setb r15b
   124: 450fb6ff                       movzx r15d, r15b
   128: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   12d: 46883c13                       mov byte ptr [rbx + r10], r15b
   131: 488b9c24a0000000               mov rbx, qword ptr [rsp + 0xa0]
   139: 4c39e5                         cmp rbp, r12
   13c: 410f95c7                       setne r15b
   140: 450fb6ff                       movzx r15d, r15b
   144: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   149: 46883c13                       mov byte ptr [rbx + r10], r15b
   14d: 488b9c24a8000000               mov rbx, qword ptr [rsp + 0xa8]
   155: 4c39e5                         cmp rbp, r12
   158: 410f94c7                       sete r15b
   15c: 450fb6ff                       movzx r15d, r15b
   160: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   165: 46883c13                       mov byte ptr [rbx + r10], r15b
   169: 488b9c24b0000000               mov rbx, qword ptr [rsp + 0xb0]
   171: 4989ef                         mov r15, rbp
   174: 4183f701                       xor r15d, 1
   178: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   17d: 46883c13                       mov byte ptr [rbx + r10], r15b
   181: 488b9c24b8000000               mov rbx, qword ptr [rsp + 0xb8]
   189: 4d89e7                         mov r15, r12
   18c: 4585f6                         test r14d, r14d
   18f: 4c0f45fd                       cmovne r15, rbp
   193: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   198: 46883c13                       mov byte ptr [rbx + r10], r15b
   19c: 488b9c24c0000000               mov rbx, qword ptr [rsp + 0xc0]
   1a4: 4889ed                         mov rbp, rbp
   1a7: 4c21e5                         and rbp, r12
   1aa: 4c09ed                         or rbp, r13
   1ad: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1b2: 42882c13                       mov byte ptr [rbx + r10], bpl
   1b6: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1bb: 4983c201                       add r10, 1
   1bf: 4c89542430                     mov qword ptr [rsp + 0x30], r10
   1c4: e980feffff                     jmp .Lloop1
.Lexit2:
   1c9: 4883c438                       add rsp, 0x38
   1cd: 415f                           pop r15
   1cf: 415e                           pop r14
   1d1: 415d                           pop r13
   1d3: 415c                           pop r12
   1d5: 5d                             pop rbp
   1d6: 5b                             pop rbx
   1d7: c3                             ret
