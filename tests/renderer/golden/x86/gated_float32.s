; fusegrad x86-64 kernel gated_float32
gated_float32:
     0: 53                             push rbx
     1: 55                             push rbp
     2: 4154                           push r12
     4: 4881ecc0000000                 sub rsp, 0xc0
     b: 48893c24                       mov qword ptr [rsp], rdi
     f: 4889742408                     mov qword ptr [rsp + 8], rsi
    14: 4889542410                     mov qword ptr [rsp + 0x10], rdx
    19: 488b3424                       mov rsi, qword ptr [rsp]
    1d: 488b7c2408                     mov rdi, qword ptr [rsp + 8]
    22: 4c8b442410                     mov r8, qword ptr [rsp + 0x10]
    27: 41b900000000                   mov r9d, 0
.Lloop1:
    2d: 4983f908                       cmp r9, 8
    31: 0f8d64000000                   jge .Lexit2
    37: 4c89cb                         mov rbx, r9
    3a: 83c303                         add ebx, 3
    3d: 4863db                         movsxd rbx, ebx
    40: 4883fb08                       cmp rbx, 8
    44: 400f9cc5                       setl bpl
    48: 400fb6ed                       movzx ebp, bpl
    4c: 488d1c9e                       lea rbx, [rsi + rbx*4]
    50: 4c8d2569000000                 lea r12, [rip + .LC0]
    57: 85ed                           test ebp, ebp
    59: 490f44dc                       cmove rbx, r12
    5d: c5fa1003                       vmovss xmm0, dword ptr [rbx]
    61: c4a17a11048f                   vmovss dword ptr [rdi + r9*4], xmm0
    67: 4c89cb                         mov rbx, r9
    6a: 4883e301                       and rbx, 1
    6e: 4883fb00                       cmp rbx, 0
    72: 0f94c3                         sete bl
    75: 0fb6db                         movzx ebx, bl
    78: c4a17a10048e                   vmovss xmm0, dword ptr [rsi + r9*4]
    7e: 4b8d2c88                       lea rbp, [r8 + r9*4]
    82: 4c8d642418                     lea r12, [rsp + 0x18]
    87: 85db                           test ebx, ebx
    89: 490f44ec                       cmove rbp, r12
    8d: c5fa114500                     vmovss dword ptr [rbp], xmm0
    92: 4983c101                       add r9, 1
    96: e992ffffff                     jmp .Lloop1
.Lexit2:
    9b: c5f877                         vzeroupper
    9e: 4881c4c0000000                 add rsp, 0xc0
    a5: 415c                           pop r12
    a7: 5d                             pop rbp
    a8: 5b                             pop rbx
    a9: c3                             ret
    aa: cccccccccccccccccccccccccccccccccccccccccccc ; padding
.LC0:
    c0: 000000c000000000000000000000000000000000000000000000000000000000 ; f32 -2.0 / f64 1.591496843e-314
