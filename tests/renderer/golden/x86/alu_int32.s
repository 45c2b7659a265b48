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
    5d: 0f8d70020000                   jge .Lexit2
    63: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    68: 4a632c96                       movsxd rbp, dword ptr [rsi + r10*4]
    6c: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    71: 4e632497                       movsxd r12, dword ptr [rdi + r10*4]
    75: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    7a: 4f632c90                       movsxd r13, dword ptr [r8 + r10*4]
    7e: 4c8b542450                     mov r10, qword ptr [rsp + 0x50]
    83: 4c8b5c2430                     mov r11, qword ptr [rsp + 0x30]
    88: 470fb6341a                     movzx r14d, byte ptr [r10 + r11]
    8d: 4c8b7c2420                     mov r15, qword ptr [rsp + 0x20]
    92: 4889eb                         mov rbx, rbp
    95: 4401e3                         add ebx, r12d
    98: 4863db                         movsxd rbx, ebx
    9b: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    a0: 43891c97                       mov dword ptr [r15 + r10*4], ebx
    a4: 488b5c2428                     mov rbx, qword ptr [rsp + 0x28]
    a9: 4989ef                         mov r15, rbp
    ac: 4529e7                         sub r15d, r12d
    af: 4d63ff                         movsxd r15, r15d
    b2: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    b7: 46893c93                       mov dword ptr [rbx + r10*4], r15d
    bb: 488b9c2450010000               mov rbx, qword ptr [rsp + 0x150]
    c3: 4989ef                         mov r15, rbp
    c6: 450faffc                       imul r15d, r12d
    ca: 4d63ff                         movsxd r15, r15d
    cd: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    d2: 46893c93                       mov dword ptr [rbx + r10*4], r15d
    d6: 488b9c2458010000               mov rbx, qword ptr [rsp + 0x158]
    de: 4585e4                         test r12d, r12d
    e1: 0f8424000000                   je .Ldivzero3
    e7: 4183fcff                       cmp r12d, -1
    eb: 0f840f000000                   je .Ldivneg5
    f1: 4889e8                         mov rax, rbp
    f4: 99                             cdq
    f5: 41f7fc                         idiv r12d
    f8: 4989c7                         mov r15, rax
    fb: e911000000                     jmp .Ldivdone4
.Ldivneg5:
   100: 4989ef                         mov r15, rbp
   103: 49f7df                         neg r15
   106: e906000000                     jmp .Ldivdone4
.Ldivzero3:
   10b: 41bf00000000                   mov r15d, 0
.Ldivdone4:
   111: 4d63ff                         movsxd r15, r15d
   114: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   119: 46893c93                       mov dword ptr [rbx + r10*4], r15d
   11d: 488b9c2460010000               mov rbx, qword ptr [rsp + 0x160]
   125: 4585e4                         test r12d, r12d
   128: 0f8419000000                   je .Ldivzero6
   12e: 4183fcff                       cmp r12d, -1
   132: 0f840f000000                   je .Ldivneg8
   138: 4889e8                         mov rax, rbp
   13b: 99                             cdq
   13c: 41f7fc                         idiv r12d
   13f: 4989d7                         mov r15, rdx
   142: e906000000                     jmp .Ldivdone7
.Ldivneg8:
.Ldivzero6:
   147: 41bf00000000                   mov r15d, 0
.Ldivdone7:
   14d: 4d63ff                         movsxd r15, r15d
   150: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   155: 46893c93                       mov dword ptr [rbx + r10*4], r15d
   159: 488b9c2468010000               mov rbx, qword ptr [rsp + 0x168]
   161: 4989ef                         mov r15, rbp
   164: 4d39e7                         cmp r15, r12
   167: 4d0f4cfc                       cmovl r15, r12
   16b: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   170: 46893c93                       mov dword ptr [rbx + r10*4], r15d
   174: 488b9c2470010000               mov rbx, qword ptr [rsp + 0x170]
   17c: 4989ef                         mov r15, rbp
   17f: 4c89e1                         mov rcx, r12
   182: 49d3e7                         shl r15, cl
   185: 41b900000000                   mov r9d, 0
   18b: 4883f920                       cmp rcx, 0x20
   18f: 4d0f43f9                       cmovae r15, r9
   193: 4d63ff                         movsxd r15, r15d
   196: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   19b: 46893c93                       mov dword ptr [rbx + r10*4], r15d
   19f: 4c8b8c2478010000               mov r9, qword ptr [rsp + 0x178]
   1a7: 4889eb                         mov rbx, rbp
   1aa: 4c89e1                         mov rcx, r12
   1ad: 41bf1f000000                   mov r15d, 0x1f
   1b3: 4c39f9                         cmp rcx, r15
   1b6: 490f47cf                       cmova rcx, r15
   1ba: 48d3fb                         sar rbx, cl
   1bd: 4863db                         movsxd rbx, ebx
   1c0: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1c5: 43891c91                       mov dword ptr [r9 + r10*4], ebx
   1c9: 4c8b8c2480010000               mov r9, qword ptr [rsp + 0x180]
   1d1: 4889eb                         mov rbx, rbp
   1d4: 4c21e3                         and rbx, r12
   1d7: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1dc: 43891c91                       mov dword ptr [r9 + r10*4], ebx
   1e0: 4c8b8c2488010000               mov r9, qword ptr [rsp + 0x188]
   1e8: 4889eb                         mov rbx, rbp
   1eb: 4c09e3                         or rbx, r12
   1ee: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1f3: 43891c91                       mov dword ptr [r9 + r10*4], ebx
   1f7: 4c8b8c2490010000               mov r9, qword ptr [rsp + 0x190]
   1ff: 4889eb                         mov rbx, rbp
   202: 4c31e3                         xor rbx, r12
   205: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   20a: 43891c91                       mov dword ptr [r9 + r10*4], ebx
   20e: 4c8b8c2498010000               mov r9, qword ptr [rsp + 0x198]
   216: 4c39e5                         cmp rbp, r12
   219: 0f9cc3                         setl bl
   21c: 0fb6db                         movzx ebx, bl
   21f: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   224: 43881c11                       mov byte ptr [r9 + r10], bl
   228: 4c8b8c24a0010000               mov r9, qword ptr [rsp + 0x1a0]
   230: 4c39e5                         cmp rbp, r12
   233: 0f95c3                         setne bl
   236: 0fb6db                         movzx ebx, bl
   239: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   23e: 43881c11                       mov byte ptr [r9 + r10], bl
   242: 4c8b8c24a8010000               mov r9, qword ptr [rsp + 0x1a8]
   24a: 4c39e5                         cmp rbp, r12
   24d: 0f94c3                         sete bl
   250: 0fb6db                         movzx ebx, bl
   253: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   258: 43881c11                       mov byte ptr [r9 + r10], bl
   25c: 4c8b8c24b0010000               mov r9, qword ptr [rsp + 0x1b0]
   264: 4889eb                         mov rbx, rbp
   267: 48f7db                         neg rbx
   26a: 4863db                         movsxd rbx, ebx
   26d: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   272: 43891c91                       mov dword ptr [r9 + r10*4], ebx
   276: 4c8b8c24b8010000               mov r9, qword ptr [rsp + 0x1b8]
   27e: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   283: 43892c91                       mov dword ptr [r9 + r10*4], ebp
   287: 4c8b8c24c0010000               mov r9, qword ptr [rsp + 0x1c0]
   28f: 4c89e3                         mov rbx, r12
   292: 4585f6                         test r14d, r14d
   295: 480f45dd                       cmovne rbx, rbp
   299: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   29e: 43891c91                       mov dword ptr [r9 + r10*4], ebx
   2a2: 4c8b8c24c8010000               mov r9, qword ptr [rsp + 0x1c8]
   2aa: 4889eb                         mov rbx, rbp
   2ad: 410fafdc                       imul ebx, r12d
   2b1: 4401eb                         add ebx, r13d
   2b4: 4863db                         movsxd rbx, ebx
   2b7: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   2bc: 43891c91                       mov dword ptr [r9 + r10*4], ebx
   2c0: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   2c5: 4983c201                       add r10, 1
   2c9: 4c89542430                     mov qword ptr [rsp + 0x30], r10
   2ce: e97efdffff                     jmp .Lloop1
.Lexit2:
   2d3: c5f877                         vzeroupper
   2d6: 4881c418010000                 add rsp, 0x118
   2dd: 415f                           pop r15
   2df: 415e                           pop r14
   2e1: 415d                           pop r13
   2e3: 415c                           pop r12
   2e5: 5d                             pop rbp
   2e6: 5b                             pop rbx
   2e7: c3                             ret
