; fusegrad x86-64 kernel alu_int32
alu_int32:
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
    57: 0f8dfa010000                   jge .Lexit2
    5d: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    62: 49632c9a                       movsxd rbp, dword ptr [r10 + rbx*4]
    66: 4c8b542450                     mov r10, qword ptr [rsp + 0x50]
    6b: 4d63249a                       movsxd r12, dword ptr [r10 + rbx*4]
    6f: 4d632c98                       movsxd r13, dword ptr [r8 + rbx*4]
    73: 450fb63419                     movzx r14d, byte ptr [r9 + rbx]
    78: 4c8b7c2420                     mov r15, qword ptr [rsp + 0x20]
    7d: 4889ee                         mov rsi, rbp
    80: 4401e6                         add esi, r12d
    83: 4863f6                         movsxd rsi, esi
    86: 4189349f                       mov dword ptr [r15 + rbx*4], esi
    8a: 488b742428                     mov rsi, qword ptr [rsp + 0x28]
    8f: 4989ef                         mov r15, rbp
    92: 4529e7                         sub r15d, r12d
    95: 4d63ff                         movsxd r15, r15d
    98: 44893c9e                       mov dword ptr [rsi + rbx*4], r15d
    9c: 488bb42450010000               mov rsi, qword ptr [rsp + 0x150]
    a4: 4989ef                         mov r15, rbp
    a7: 450faffc                       imul r15d, r12d
    ab: 4d63ff                         movsxd r15, r15d
    ae: 44893c9e                       mov dword ptr [rsi + rbx*4], r15d
    b2: 488bb42458010000               mov rsi, qword ptr [rsp + 0x158]
    ba: 4585e4                         test r12d, r12d
    bd: 0f8424000000                   je .Ldivzero3
    c3: 4183fcff                       cmp r12d, -1
    c7: 0f840f000000                   je .Ldivneg5
    cd: 4889e8                         mov rax, rbp
    d0: 99                             cdq
    d1: 41f7fc                         idiv r12d
    d4: 4989c7                         mov r15, rax
    d7: e911000000                     jmp .Ldivdone4
.Ldivneg5:
    dc: 4989ef                         mov r15, rbp
    df: 49f7df                         neg r15
    e2: e906000000                     jmp .Ldivdone4
.Ldivzero3:
    e7: 41bf00000000                   mov r15d, 0
.Ldivdone4:
    ed: 4d63ff                         movsxd r15, r15d
    f0: 44893c9e                       mov dword ptr [rsi + rbx*4], r15d
    f4: 488bb42460010000               mov rsi, qword ptr [rsp + 0x160]
    fc: 4585e4                         test r12d, r12d
    ff: 0f8419000000                   je .Ldivzero6
   105: 4183fcff                       cmp r12d, -1
   109: 0f840f000000                   je .Ldivneg8
   10f: 4889e8                         mov rax, rbp
   112: 99                             cdq
   113: 41f7fc                         idiv r12d
   116: 4989d7                         mov r15, rdx
   119: e906000000                     jmp .Ldivdone7
.Ldivneg8:
.Ldivzero6:
   11e: 41bf00000000                   mov r15d, 0
.Ldivdone7:
   124: 4d63ff                         movsxd r15, r15d
   127: 44893c9e                       mov dword ptr [rsi + rbx*4], r15d
   12b: 488bb42468010000               mov rsi, qword ptr [rsp + 0x168]
   133: 4989ef                         mov r15, rbp
   136: 4d39e7                         cmp r15, r12
   139: 4d0f4cfc                       cmovl r15, r12
   13d: 44893c9e                       mov dword ptr [rsi + rbx*4], r15d
   141: 488bb42470010000               mov rsi, qword ptr [rsp + 0x170]
   149: 4989ef                         mov r15, rbp
   14c: 4c89e1                         mov rcx, r12
   14f: 49d3e7                         shl r15, cl
   152: bf00000000                     mov edi, 0
   157: 4883f920                       cmp rcx, 0x20
   15b: 4c0f43ff                       cmovae r15, rdi
   15f: 4d63ff                         movsxd r15, r15d
   162: 44893c9e                       mov dword ptr [rsi + rbx*4], r15d
   166: 488bb42478010000               mov rsi, qword ptr [rsp + 0x178]
   16e: 4889ef                         mov rdi, rbp
   171: 4c89e1                         mov rcx, r12
   174: 41bf1f000000                   mov r15d, 0x1f
   17a: 4c39f9                         cmp rcx, r15
   17d: 490f47cf                       cmova rcx, r15
   181: 48d3ff                         sar rdi, cl
   184: 4863ff                         movsxd rdi, edi
   187: 893c9e                         mov dword ptr [rsi + rbx*4], edi
   18a: 488bb42480010000               mov rsi, qword ptr [rsp + 0x180]
   192: 4889ef                         mov rdi, rbp
   195: 4c21e7                         and rdi, r12
   198: 893c9e                         mov dword ptr [rsi + rbx*4], edi
   19b: 488bb42488010000               mov rsi, qword ptr [rsp + 0x188]
   1a3: 4889ef                         mov rdi, rbp
   1a6: 4c09e7                         or rdi, r12
   1a9: 893c9e                         mov dword ptr [rsi + rbx*4], edi
   1ac: 488bb42490010000               mov rsi, qword ptr [rsp + 0x190]
   1b4: 4889ef                         mov rdi, rbp
   1b7: 4c31e7                         xor rdi, r12
   1ba: 893c9e                         mov dword ptr [rsi + rbx*4], edi
   1bd: 488bb42498010000               mov rsi, qword ptr [rsp + 0x198]
   1c5: 4c39e5                         cmp rbp, r12
   1c8: 400f9cc7                       setl dil
   1cc: 400fb6ff                       movzx edi, dil
   1d0: 40883c1e                       mov byte ptr [rsi + rbx], dil
   1d4: 488bb424a0010000               mov rsi, qword ptr [rsp + 0x1a0]
   1dc: 4c39e5                         cmp rbp, r12
   1df: 400f95c7                       setne dil
   1e3: 400fb6ff                       movzx edi, dil
   1e7: 40883c1e                       mov byte ptr [rsi + rbx], dil
   1eb: 488bb424a8010000               mov rsi, qword ptr [rsp + 0x1a8]
   1f3: 4c39e5                         cmp rbp, r12
   1f6: 400f94c7                       sete dil
   1fa: 400fb6ff                       movzx edi, dil
   1fe: 40883c1e                       mov byte ptr [rsi + rbx], dil
   202: 488bb424b0010000               mov rsi, qword ptr [rsp + 0x1b0]
   20a: 4889ef                         mov rdi, rbp
   20d: 48f7df                         neg rdi
   210: 4863ff                         movsxd rdi, edi
   213: 893c9e                         mov dword ptr [rsi + rbx*4], edi
   216: 488bb424b8010000               mov rsi, qword ptr [rsp + 0x1b8]
   21e: 892c9e                         mov dword ptr [rsi + rbx*4], ebp
   221: 488bb424c0010000               mov rsi, qword ptr [rsp + 0x1c0]
   229: 4c89e7                         mov rdi, r12
   22c: 4585f6                         test r14d, r14d
   22f: 480f45fd                       cmovne rdi, rbp
   233: 893c9e                         mov dword ptr [rsi + rbx*4], edi
   236: 488bb424c8010000               mov rsi, qword ptr [rsp + 0x1c8]
   23e: 4889ef                         mov rdi, rbp
   241: 410faffc                       imul edi, r12d
   245: 4401ef                         add edi, r13d
   248: 4863ff                         movsxd rdi, edi
   24b: 893c9e                         mov dword ptr [rsi + rbx*4], edi
   24e: 4883c301                       add rbx, 1
   252: e9f9fdffff                     jmp .Lloop1
.Lexit2:
   257: c5f877                         vzeroupper
   25a: 4881c418010000                 add rsp, 0x118
   261: 415f                           pop r15
   263: 415e                           pop r14
   265: 415d                           pop r13
   267: 415c                           pop r12
   269: 5d                             pop rbp
   26a: 5b                             pop rbx
   26b: c3                             ret
