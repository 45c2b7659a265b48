; fusegrad x86-64 kernel alu_int64
alu_int64:
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
    5a: 0f8d57020000                   jge .Lexit2
    60: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    65: 4a8b2cd6                       mov rbp, qword ptr [rsi + r10*8]
    69: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    6e: 4e8b24d7                       mov r12, qword ptr [rdi + r10*8]
    72: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    77: 4f8b2cd0                       mov r13, qword ptr [r8 + r10*8]
    7b: 4c8b542438                     mov r10, qword ptr [rsp + 0x38]
    80: 4c8b5c2430                     mov r11, qword ptr [rsp + 0x30]
    85: 470fb6341a                     movzx r14d, byte ptr [r10 + r11]
    8a: 4c8b7c2420                     mov r15, qword ptr [rsp + 0x20]
    8f: 4889eb                         mov rbx, rbp
    92: 4c01e3                         add rbx, r12
    95: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    9a: 4b891cd7                       mov qword ptr [r15 + r10*8], rbx
    9e: 488b5c2428                     mov rbx, qword ptr [rsp + 0x28]
    a3: 4989ef                         mov r15, rbp
    a6: 4d29e7                         sub r15, r12
    a9: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    ae: 4e893cd3                       mov qword ptr [rbx + r10*8], r15
    b2: 488b9c2480000000               mov rbx, qword ptr [rsp + 0x80]
    ba: 4989ef                         mov r15, rbp
    bd: 4d0faffc                       imul r15, r12
    c1: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
    c6: 4e893cd3                       mov qword ptr [rbx + r10*8], r15
    ca: 488b9c2488000000               mov rbx, qword ptr [rsp + 0x88]
    d2: 4d85e4                         test r12, r12
    d5: 0f8425000000                   je .Ldivzero3
    db: 4983fcff                       cmp r12, -1
    df: 0f8410000000                   je .Ldivneg5
    e5: 4889e8                         mov rax, rbp
    e8: 4899                           cqo
    ea: 49f7fc                         idiv r12
    ed: 4989c7                         mov r15, rax
    f0: e911000000                     jmp .Ldivdone4
.Ldivneg5:
    f5: 4989ef                         mov r15, rbp
    f8: 49f7df                         neg r15
    fb: e906000000                     jmp .Ldivdone4
.Ldivzero3:
   100: 41bf00000000                   mov r15d, 0
.Ldivdone4:
   106: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   10b: 4e893cd3                       mov qword ptr [rbx + r10*8], r15
   10f: 488b9c2490000000               mov rbx, qword ptr [rsp + 0x90]
   117: 4d85e4                         test r12, r12
   11a: 0f841a000000                   je .Ldivzero6
   120: 4983fcff                       cmp r12, -1
   124: 0f8410000000                   je .Ldivneg8
   12a: 4889e8                         mov rax, rbp
   12d: 4899                           cqo
   12f: 49f7fc                         idiv r12
   132: 4989d7                         mov r15, rdx
   135: e906000000                     jmp .Ldivdone7
.Ldivneg8:
.Ldivzero6:
   13a: 41bf00000000                   mov r15d, 0
.Ldivdone7:
   140: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   145: 4e893cd3                       mov qword ptr [rbx + r10*8], r15
   149: 488b9c2498000000               mov rbx, qword ptr [rsp + 0x98]
   151: 4989ef                         mov r15, rbp
   154: 4d39e7                         cmp r15, r12
   157: 4d0f4cfc                       cmovl r15, r12
   15b: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   160: 4e893cd3                       mov qword ptr [rbx + r10*8], r15
   164: 488b9c24a0000000               mov rbx, qword ptr [rsp + 0xa0]
   16c: 4989ef                         mov r15, rbp
   16f: 4c89e1                         mov rcx, r12
   172: 49d3e7                         shl r15, cl
   175: 41b900000000                   mov r9d, 0
   17b: 4883f940                       cmp rcx, 0x40
   17f: 4d0f43f9                       cmovae r15, r9
   183: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   188: 4e893cd3                       mov qword ptr [rbx + r10*8], r15
   18c: 4c8b8c24a8000000               mov r9, qword ptr [rsp + 0xa8]
   194: 4889eb                         mov rbx, rbp
   197: 4c89e1                         mov rcx, r12
   19a: 41bf3f000000                   mov r15d, 0x3f
   1a0: 4c39f9                         cmp rcx, r15
   1a3: 490f47cf                       cmova rcx, r15
   1a7: 48d3fb                         sar rbx, cl
   1aa: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1af: 4b891cd1                       mov qword ptr [r9 + r10*8], rbx
   1b3: 4c8b8c24b0000000               mov r9, qword ptr [rsp + 0xb0]
   1bb: 4889eb                         mov rbx, rbp
   1be: 4c21e3                         and rbx, r12
   1c1: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1c6: 4b891cd1                       mov qword ptr [r9 + r10*8], rbx
   1ca: 4c8b8c24b8000000               mov r9, qword ptr [rsp + 0xb8]
   1d2: 4889eb                         mov rbx, rbp
   1d5: 4c09e3                         or rbx, r12
   1d8: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1dd: 4b891cd1                       mov qword ptr [r9 + r10*8], rbx
   1e1: 4c8b8c24c0000000               mov r9, qword ptr [rsp + 0xc0]
   1e9: 4889eb                         mov rbx, rbp
   1ec: 4c31e3                         xor rbx, r12
   1ef: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   1f4: 4b891cd1                       mov qword ptr [r9 + r10*8], rbx
   1f8: 4c8b8c24c8000000               mov r9, qword ptr [rsp + 0xc8]
   200: 4c39e5                         cmp rbp, r12
   203: 0f9cc3                         setl bl
   206: 0fb6db                         movzx ebx, bl
   209: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   20e: 43881c11                       mov byte ptr [r9 + r10], bl
   212: 4c8b8c24d0000000               mov r9, qword ptr [rsp + 0xd0]
   21a: 4c39e5                         cmp rbp, r12
   21d: 0f95c3                         setne bl
   220: 0fb6db                         movzx ebx, bl
   223: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   228: 43881c11                       mov byte ptr [r9 + r10], bl
   22c: 4c8b8c24d8000000               mov r9, qword ptr [rsp + 0xd8]
   234: 4c39e5                         cmp rbp, r12
   237: 0f94c3                         sete bl
   23a: 0fb6db                         movzx ebx, bl
   23d: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   242: 43881c11                       mov byte ptr [r9 + r10], bl
   246: 4c8b8c24e0000000               mov r9, qword ptr [rsp + 0xe0]
   24e: 4889eb                         mov rbx, rbp
   251: 48f7db                         neg rbx
   254: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   259: 4b891cd1                       mov qword ptr [r9 + r10*8], rbx
   25d: 4c8b8c24e8000000               mov r9, qword ptr [rsp + 0xe8]
   265: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   26a: 4b892cd1                       mov qword ptr [r9 + r10*8], rbp
   26e: 4c8b8c24f0000000               mov r9, qword ptr [rsp + 0xf0]
   276: 4c89e3                         mov rbx, r12
   279: 4585f6                         test r14d, r14d
   27c: 480f45dd                       cmovne rbx, rbp
   280: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   285: 4b891cd1                       mov qword ptr [r9 + r10*8], rbx
   289: 4c8b8c24f8000000               mov r9, qword ptr [rsp + 0xf8]
   291: 4889eb                         mov rbx, rbp
   294: 490fafdc                       imul rbx, r12
   298: 4c01eb                         add rbx, r13
   29b: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   2a0: 4b891cd1                       mov qword ptr [r9 + r10*8], rbx
   2a4: 4c8b542430                     mov r10, qword ptr [rsp + 0x30]
   2a9: 4983c201                       add r10, 1
   2ad: 4c89542430                     mov qword ptr [rsp + 0x30], r10
   2b2: e997fdffff                     jmp .Lloop1
.Lexit2:
   2b7: 4883c448                       add rsp, 0x48
   2bb: 415f                           pop r15
   2bd: 415e                           pop r14
   2bf: 415d                           pop r13
   2c1: 415c                           pop r12
   2c3: 5d                             pop rbp
   2c4: 5b                             pop rbx
   2c5: c3                             ret
