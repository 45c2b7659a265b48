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
    2e: 488b3424                       mov rsi, qword ptr [rsp]
    32: 488b7c2408                     mov rdi, qword ptr [rsp + 8]
    37: 4c8b442410                     mov r8, qword ptr [rsp + 0x10]
    3c: 4c8b4c2418                     mov r9, qword ptr [rsp + 0x18]
    41: 41ba00000000                   mov r10d, 0
    47: 4c89542430                     mov qword ptr [rsp + 0x30], r10
.Lloop1:
    4c: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    51: 4983fa04                       cmp r10, 4
    55: 0f8d74010000                   jge .Lexit2
    5b: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    60: 420fb62c16                     movzx ebp, byte ptr [rsi + r10]
    65: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    6a: 460fb62417                     movzx r12d, byte ptr [rdi + r10]
    6f: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    74: 470fb62c10                     movzx r13d, byte ptr [r8 + r10]
    79: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    7e: 470fb63411                     movzx r14d, byte ptr [r9 + r10]
    83: 4c8b7c2420                     mov r15, qword ptr [rsp + 0x20]
    88: 4889eb                         mov rbx, rbp
    8b: 4c09e3                         or rbx, r12
    8e: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    93: 43881c17                       mov byte ptr [r15 + r10], bl
    97: 488b5c2428                     mov rbx, qword ptr [rsp + 0x28]
    9c: 4989ef                         mov r15, rbp
    9f: 4d31e7                         xor r15, r12
    a2: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    a7: 46883c13                       mov byte ptr [rbx + r10], r15b
    ab: 488b9c2430010000               mov rbx, qword ptr [rsp + 0x130]
    b3: 4989ef                         mov r15, rbp
    b6: 4d21e7                         and r15, r12
    b9: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    be: 46883c13                       mov byte ptr [rbx + r10], r15b
    c2: 488b9c2438010000               mov rbx, qword ptr [rsp + 0x138]
    ca: 4989ef                         mov r15, rbp
    cd: 4d21e7                         and r15, r12
    d0: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    d5: 46883c13                       mov byte ptr [rbx + r10], r15b
    d9: 488b9c2440010000               mov rbx, qword ptr [rsp + 0x140]
    e1: 4989ef                         mov r15, rbp
    e4: 4d09e7                         or r15, r12
    e7: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    ec: 46883c13                       mov byte ptr [rbx + r10], r15b
    f0: 488b9c2448010000               mov rbx, qword ptr [rsp + 0x148]
    f8: 4989ef                         mov r15, rbp
    fb: 4d31e7                         xor r15, r12
    fe: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   103: 46883c13                       mov byte ptr [rbx + r10], r15b
   107: 488b9c2450010000               mov rbx, qword ptr [rsp + 0x150]
   10f: 4989ef                         mov r15, rbp
   112: 4d09e7                         or r15, r12
   115: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   11a: 46883c13                       mov byte ptr [rbx + r10], r15b
   11e: 488b9c2458010000               mov rbx, qword ptr [rsp + 0x158]
   126: 4c39e5                         cmp rbp, r12
   129: 410f92c7                       setb r15b
   12d: 450fb6ff                       movzx r15d, r15b
   131: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   136: 46883c13                       mov byte ptr [rbx + r10], r15b
   13a: 488b9c2460010000               mov rbx, qword ptr [rsp + 0x160]
   142: 4c39e5                         cmp rbp, r12
   145: 410f95c7                       setne r15b
   149: 450fb6ff                       movzx r15d, r15b
   14d: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   152: 46883c13                       mov byte ptr [rbx + r10], r15b
   156: 488b9c2468010000               mov rbx, qword ptr [rsp + 0x168]
   15e: 4c39e5                         cmp rbp, r12
   161: 410f94c7                       sete r15b
   165: 450fb6ff                       movzx r15d, r15b
   169: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   16e: 46883c13                       mov byte ptr [rbx + r10], r15b
   172: 488b9c2470010000               mov rbx, qword ptr [rsp + 0x170]
   17a: 4989ef                         mov r15, rbp
   17d: 4183f701                       xor r15d, 1
   181: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   186: 46883c13                       mov byte ptr [rbx + r10], r15b
   18a: 488b9c2478010000               mov rbx, qword ptr [rsp + 0x178]
   192: 4d89e7                         mov r15, r12
   195: 4585f6                         test r14d, r14d
   198: 4c0f45fd                       cmovne r15, rbp
   19c: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1a1: 46883c13                       mov byte ptr [rbx + r10], r15b
   1a5: 488b9c2480010000               mov rbx, qword ptr [rsp + 0x180]
   1ad: 4c21e5                         and rbp, r12
   1b0: 4c09ed                         or rbp, r13
   1b3: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1b8: 42882c13                       mov byte ptr [rbx + r10], bpl
   1bc: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1c1: 4983c201                       add r10, 1
   1c5: 4c89542430                     mov qword ptr [rsp + 0x30], r10
   1ca: e97dfeffff                     jmp .Lloop1
.Lexit2:
   1cf: c5f877                         vzeroupper
   1d2: 4881c4f8000000                 add rsp, 0xf8
   1d9: 415f                           pop r15
   1db: 415e                           pop r14
   1dd: 415d                           pop r13
   1df: 415c                           pop r12
   1e1: 5d                             pop rbp
   1e2: 5b                             pop rbx
   1e3: c3                             ret
