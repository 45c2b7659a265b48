; fusegrad x86-64 kernel alu_int32
alu_int32:
     0: 53                             push rbx
     1: 55                             push rbp
     2: 4154                           push r12
     4: 4155                           push r13
     6: 4156                           push r14
     8: 4157                           push r15
     a: 4883ec48                       sub rsp, 0x48
     e: 48893c24                       mov qword ptr [rsp], rdi
    12: 4889742408                     mov qword ptr [rsp + 8], rsi
    17: 4889542410                     mov qword ptr [rsp + 0x10], rdx
    1c: 48894c2418                     mov qword ptr [rsp + 0x18], rcx
    21: 4c89442420                     mov qword ptr [rsp + 0x20], r8
    26: 4c894c2428                     mov qword ptr [rsp + 0x28], r9
    2b: 488b3424                       mov rsi, qword ptr [rsp]
    2f: 488b7c2408                     mov rdi, qword ptr [rsp + 8]
    34: 4c8b442410                     mov r8, qword ptr [rsp + 0x10]
    39: 4c8b542418                     mov r10, qword ptr [rsp + 0x18]
    3e: 4c89542438                     mov qword ptr [rsp + 0x38], r10
    43: 41ba00000000                   mov r10d, 0
    49: 4c89542430                     mov qword ptr [rsp + 0x30], r10
.Lloop1:
    4e: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    53: 4981fa21010000                 cmp r10, 0x121
    5a: 0f8d70020000                   jge .Lexit2
    60: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    65: 4a632c96                       movsxd rbp, dword ptr [rsi + r10*4]
    69: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    6e: 4e632497                       movsxd r12, dword ptr [rdi + r10*4]
    72: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    77: 4f632c90                       movsxd r13, dword ptr [r8 + r10*4]
    7b: 4c8b542438                     mov r10, qword ptr [rsp + 0x38]
    80: 4c8b5c2430                     mov r11, qword ptr [rsp + 0x30]
    85: 470fb6341a                     movzx r14d, byte ptr [r10 + r11]
    8a: 4c8b7c2420                     mov r15, qword ptr [rsp + 0x20]
    8f: 4889eb                         mov rbx, rbp
    92: 4401e3                         add ebx, r12d
    95: 4863db                         movsxd rbx, ebx
    98: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    9d: 43891c97                       mov dword ptr [r15 + r10*4], ebx
    a1: 488b5c2428                     mov rbx, qword ptr [rsp + 0x28]
    a6: 4989ef                         mov r15, rbp
    a9: 4529e7                         sub r15d, r12d
    ac: 4d63ff                         movsxd r15, r15d
    af: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    b4: 46893c93                       mov dword ptr [rbx + r10*4], r15d
    b8: 488b9c2480000000               mov rbx, qword ptr [rsp + 0x80]
    c0: 4989ef                         mov r15, rbp
    c3: 450faffc                       imul r15d, r12d
    c7: 4d63ff                         movsxd r15, r15d
    ca: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    cf: 46893c93                       mov dword ptr [rbx + r10*4], r15d
    d3: 488b9c2488000000               mov rbx, qword ptr [rsp + 0x88]
    db: 4585e4                         test r12d, r12d
    de: 0f8424000000                   je .Ldivzero3
    e4: 4183fcff                       cmp r12d, -1
    e8: 0f840f000000                   je .Ldivneg5
    ee: 4889e8                         mov rax, rbp
    f1: 99                             cdq
    f2: 41f7fc                         idiv r12d
    f5: 4989c7                         mov r15, rax
    f8: e911000000                     jmp .Ldivdone4
.Ldivneg5:
    fd: 4989ef                         mov r15, rbp
   100: 49f7df                         neg r15
   103: e906000000                     jmp .Ldivdone4
.Ldivzero3:
   108: 41bf00000000                   mov r15d, 0
.Ldivdone4:
   10e: 4d63ff                         movsxd r15, r15d
   111: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   116: 46893c93                       mov dword ptr [rbx + r10*4], r15d
   11a: 488b9c2490000000               mov rbx, qword ptr [rsp + 0x90]
   122: 4585e4                         test r12d, r12d
   125: 0f8419000000                   je .Ldivzero6
   12b: 4183fcff                       cmp r12d, -1
   12f: 0f840f000000                   je .Ldivneg8
   135: 4889e8                         mov rax, rbp
   138: 99                             cdq
   139: 41f7fc                         idiv r12d
   13c: 4989d7                         mov r15, rdx
   13f: e906000000                     jmp .Ldivdone7
.Ldivneg8:
.Ldivzero6:
   144: 41bf00000000                   mov r15d, 0
.Ldivdone7:
   14a: 4d63ff                         movsxd r15, r15d
   14d: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   152: 46893c93                       mov dword ptr [rbx + r10*4], r15d
   156: 488b9c2498000000               mov rbx, qword ptr [rsp + 0x98]
   15e: 4989ef                         mov r15, rbp
   161: 4d39e7                         cmp r15, r12
   164: 4d0f4cfc                       cmovl r15, r12
   168: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   16d: 46893c93                       mov dword ptr [rbx + r10*4], r15d
   171: 488b9c24a0000000               mov rbx, qword ptr [rsp + 0xa0]
   179: 4989ef                         mov r15, rbp
   17c: 4c89e1                         mov rcx, r12
   17f: 49d3e7                         shl r15, cl
   182: 41b900000000                   mov r9d, 0
   188: 4883f920                       cmp rcx, 0x20
   18c: 4d0f43f9                       cmovae r15, r9
   190: 4d63ff                         movsxd r15, r15d
   193: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   198: 46893c93                       mov dword ptr [rbx + r10*4], r15d
   19c: 4c8b8c24a8000000               mov r9, qword ptr [rsp + 0xa8]
   1a4: 4889eb                         mov rbx, rbp
   1a7: 4c89e1                         mov rcx, r12
   1aa: 41bf1f000000                   mov r15d, 0x1f
   1b0: 4c39f9                         cmp rcx, r15
   1b3: 490f47cf                       cmova rcx, r15
   1b7: 48d3fb                         sar rbx, cl
   1ba: 4863db                         movsxd rbx, ebx
   1bd: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1c2: 43891c91                       mov dword ptr [r9 + r10*4], ebx
   1c6: 4c8b8c24b0000000               mov r9, qword ptr [rsp + 0xb0]
   1ce: 4889eb                         mov rbx, rbp
   1d1: 4c21e3                         and rbx, r12
   1d4: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1d9: 43891c91                       mov dword ptr [r9 + r10*4], ebx
   1dd: 4c8b8c24b8000000               mov r9, qword ptr [rsp + 0xb8]
   1e5: 4889eb                         mov rbx, rbp
   1e8: 4c09e3                         or rbx, r12
   1eb: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1f0: 43891c91                       mov dword ptr [r9 + r10*4], ebx
   1f4: 4c8b8c24c0000000               mov r9, qword ptr [rsp + 0xc0]
   1fc: 4889eb                         mov rbx, rbp
   1ff: 4c31e3                         xor rbx, r12
   202: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   207: 43891c91                       mov dword ptr [r9 + r10*4], ebx
   20b: 4c8b8c24c8000000               mov r9, qword ptr [rsp + 0xc8]
   213: 4c39e5                         cmp rbp, r12
   216: 0f9cc3                         setl bl
   219: 0fb6db                         movzx ebx, bl
   21c: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   221: 43881c11                       mov byte ptr [r9 + r10], bl
   225: 4c8b8c24d0000000               mov r9, qword ptr [rsp + 0xd0]
   22d: 4c39e5                         cmp rbp, r12
   230: 0f95c3                         setne bl
   233: 0fb6db                         movzx ebx, bl
   236: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   23b: 43881c11                       mov byte ptr [r9 + r10], bl
   23f: 4c8b8c24d8000000               mov r9, qword ptr [rsp + 0xd8]
   247: 4c39e5                         cmp rbp, r12
   24a: 0f94c3                         sete bl
   24d: 0fb6db                         movzx ebx, bl
   250: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   255: 43881c11                       mov byte ptr [r9 + r10], bl
   259: 4c8b8c24e0000000               mov r9, qword ptr [rsp + 0xe0]
   261: 4889eb                         mov rbx, rbp
   264: 48f7db                         neg rbx
   267: 4863db                         movsxd rbx, ebx
   26a: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   26f: 43891c91                       mov dword ptr [r9 + r10*4], ebx
   273: 4c8b8c24e8000000               mov r9, qword ptr [rsp + 0xe8]
   27b: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   280: 43892c91                       mov dword ptr [r9 + r10*4], ebp
   284: 4c8b8c24f0000000               mov r9, qword ptr [rsp + 0xf0]
   28c: 4c89e3                         mov rbx, r12
   28f: 4585f6                         test r14d, r14d
   292: 480f45dd                       cmovne rbx, rbp
   296: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   29b: 43891c91                       mov dword ptr [r9 + r10*4], ebx
   29f: 4c8b8c24f8000000               mov r9, qword ptr [rsp + 0xf8]
   2a7: 4889eb                         mov rbx, rbp
   2aa: 410fafdc                       imul ebx, r12d
   2ae: 4401eb                         add ebx, r13d
   2b1: 4863db                         movsxd rbx, ebx
   2b4: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   2b9: 43891c91                       mov dword ptr [r9 + r10*4], ebx
   2bd: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   2c2: 4983c201                       add r10, 1
   2c6: 4c89542430                     mov qword ptr [rsp + 0x30], r10
   2cb: e97efdffff                     jmp .Lloop1
.Lexit2:
   2d0: 4883c448                       add rsp, 0x48
   2d4: 415f                           pop r15
   2d6: 415e                           pop r14
   2d8: 415d                           pop r13
   2da: 415c                           pop r12
   2dc: 5d                             pop rbp
   2dd: 5b                             pop rbx
   2de: c3                             ret
