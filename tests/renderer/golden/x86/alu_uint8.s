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
    2e: 4c8b1424                       mov r10, qword ptr [rsp]
    32: 4c89542430                     mov qword ptr [rsp + 0x30], r10
    37: 4c8b542408                     mov r10, qword ptr [rsp + 8]
    3c: 4c89542450                     mov qword ptr [rsp + 0x50], r10
    41: 4c8b442410                     mov r8, qword ptr [rsp + 0x10]
    46: 4c8b4c2418                     mov r9, qword ptr [rsp + 0x18]
    4b: bb00000000                     mov ebx, 0
.Lloop1:
    50: 4881fb21010000                 cmp rbx, 0x121
    57: 0f8df2010000                   jge .Lexit2
    5d: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    62: 410fb62c1a                     movzx ebp, byte ptr [r10 + rbx]
    67: 4c8b542450                     mov r10, qword ptr [rsp + 0x50]
    6c: 450fb6241a                     movzx r12d, byte ptr [r10 + rbx]
    71: 450fb62c18                     movzx r13d, byte ptr [r8 + rbx]
    76: 450fb63419                     movzx r14d, byte ptr [r9 + rbx]
    7b: 4c8b7c2420                     mov r15, qword ptr [rsp + 0x20]
    80: 4889ee                         mov rsi, rbp
    83: 4401e6                         add esi, r12d
    86: 400fb6f6                       movzx esi, sil
    8a: 4188341f                       mov byte ptr [r15 + rbx], sil
    8e: 488b742428                     mov rsi, qword ptr [rsp + 0x28]
    93: 4989ef                         mov r15, rbp
    96: 4529e7                         sub r15d, r12d
    99: 450fb6ff                       movzx r15d, r15b
    9d: 44883c1e                       mov byte ptr [rsi + rbx], r15b
    a1: 488bb42450010000               mov rsi, qword ptr [rsp + 0x150]
    a9: 4989ef                         mov r15, rbp
    ac: 450faffc                       imul r15d, r12d
    b0: 450fb6ff                       movzx r15d, r15b
    b4: 44883c1e                       mov byte ptr [rsi + rbx], r15b
    b8: 488bb42458010000               mov rsi, qword ptr [rsp + 0x158]
    c0: 4585e4                         test r12d, r12d
    c3: 0f8410000000                   je .Ldivzero3
    c9: 4889e8                         mov rax, rbp
    cc: 31d2                           xor edx, edx
    ce: 41f7f4                         div r12d
    d1: 4989c7                         mov r15, rax
    d4: e906000000                     jmp .Ldivdone4
.Ldivzero3:
    d9: 41bf00000000                   mov r15d, 0
.Ldivdone4:
    df: 450fb6ff                       movzx r15d, r15b
    e3: 44883c1e                       mov byte ptr [rsi + rbx], r15b
    e7: 488bb42460010000               mov rsi, qword ptr [rsp + 0x160]
    ef: 4585e4                         test r12d, r12d
    f2: 0f8410000000                   je .Ldivzero6
    f8: 4889e8                         mov rax, rbp
    fb: 31d2                           xor edx, edx
    fd: 41f7f4                         div r12d
   100: 4989d7                         mov r15, rdx
   103: e906000000                     jmp .Ldivdone7
.Ldivzero6:
   108: 41bf00000000                   mov r15d, 0
.Ldivdone7:
   10e: 450fb6ff                       movzx r15d, r15b
   112: 44883c1e                       mov byte ptr [rsi + rbx], r15b
   116: 488bb42468010000               mov rsi, qword ptr [rsp + 0x168]
   11e: 4989ef                         mov r15, rbp
   121: 4d39e7                         cmp r15, r12
   124: 4d0f42fc                       cmovb r15, r12
   128: 44883c1e                       mov byte ptr [rsi + rbx], r15b
   12c: 488bb42470010000               mov rsi, qword ptr [rsp + 0x170]
   134: 4989ef                         mov r15, rbp
   137: 4c89e1                         mov rcx, r12
   13a: 49d3e7                         shl r15, cl
   13d: bf00000000                     mov edi, 0
   142: 4883f908                       cmp rcx, 8
   146: 4c0f43ff                       cmovae r15, rdi
   14a: 450fb6ff                       movzx r15d, r15b
   14e: 44883c1e                       mov byte ptr [rsi + rbx], r15b
   152: 488bb42478010000               mov rsi, qword ptr [rsp + 0x178]
   15a: 4889ef                         mov rdi, rbp
   15d: 4c89e1                         mov rcx, r12
   160: 48d3ef                         shr rdi, cl
   163: 41bf00000000                   mov r15d, 0
   169: 4883f908                       cmp rcx, 8
   16d: 490f43ff                       cmovae rdi, r15
   171: 400fb6ff                       movzx edi, dil
   175: 40883c1e                       mov byte ptr [rsi + rbx], dil
   179: 488bb42480010000               mov rsi, qword ptr [rsp + 0x180]
   181: 4889ef                         mov rdi, rbp
   184: 4c21e7                         and rdi, r12
   187: 40883c1e                       mov byte ptr [rsi + rbx], dil
   18b: 488bb42488010000               mov rsi, qword ptr [rsp + 0x188]
   193: 4889ef                         mov rdi, rbp
   196: 4c09e7                         or rdi, r12
   199: 40883c1e                       mov byte ptr [rsi + rbx], dil
   19d: 488bb42490010000               mov rsi, qword ptr [rsp + 0x190]
   1a5: 4889ef                         mov rdi, rbp
   1a8: 4c31e7                         xor rdi, r12
   1ab: 40883c1e                       mov byte ptr [rsi + rbx], dil
   1af: 488bb42498010000               mov rsi, qword ptr [rsp + 0x198]
   1b7: 4c39e5                         cmp rbp, r12
   1ba: 400f92c7                       setb dil
   1be: 400fb6ff                       movzx edi, dil
   1c2: 40883c1e                       mov byte ptr [rsi + rbx], dil
   1c6: 488bb424a0010000               mov rsi, qword ptr [rsp + 0x1a0]
   1ce: 4c39e5                         cmp rbp, r12
   1d1: 400f95c7                       setne dil
   1d5: 400fb6ff                       movzx edi, dil
   1d9: 40883c1e                       mov byte ptr [rsi + rbx], dil
   1dd: 488bb424a8010000               mov rsi, qword ptr [rsp + 0x1a8]
   1e5: 4c39e5                         cmp rbp, r12
   1e8: 400f94c7                       sete dil
   1ec: 400fb6ff                       movzx edi, dil
   1f0: 40883c1e                       mov byte ptr [rsi + rbx], dil
   1f4: 488bb424b0010000               mov rsi, qword ptr [rsp + 0x1b0]
   1fc: 4889ef                         mov rdi, rbp
   1ff: 48f7df                         neg rdi
   202: 400fb6ff                       movzx edi, dil
   206: 40883c1e                       mov byte ptr [rsi + rbx], dil
   20a: 488bb424b8010000               mov rsi, qword ptr [rsp + 0x1b8]
   212: 40882c1e                       mov byte ptr [rsi + rbx], bpl
   216: 488bb424c0010000               mov rsi, qword ptr [rsp + 0x1c0]
   21e: 4c89e7                         mov rdi, r12
   221: 4585f6                         test r14d, r14d
   224: 480f45fd                       cmovne rdi, rbp
   228: 40883c1e                       mov byte ptr [rsi + rbx], dil
   22c: 488bb424c8010000               mov rsi, qword ptr [rsp + 0x1c8]
   234: 4889ef                         mov rdi, rbp
   237: 410faffc                       imul edi, r12d
   23b: 4401ef                         add edi, r13d
   23e: 400fb6ff                       movzx edi, dil
   242: 40883c1e                       mov byte ptr [rsi + rbx], dil
   246: 4883c301                       add rbx, 1
   24a: e901feffff                     jmp .Lloop1
.Lexit2:
   24f: c5f877                         vzeroupper
   252: 4881c418010000                 add rsp, 0x118
   259: 415f                           pop r15
   25b: 415e                           pop r14
   25d: 415d                           pop r13
   25f: 415c                           pop r12
   261: 5d                             pop rbp
   262: 5b                             pop rbx
   263: c3                             ret
