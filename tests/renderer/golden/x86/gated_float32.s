; fusegrad x86-64 kernel gated_float32
gated_float32:
     0: 53                             push rbx
     1: 55                             push rbp
     2: 4883ec18                       sub rsp, 0x18
     6: 48893c24                       mov qword ptr [rsp], rdi
     a: 4889742408                     mov qword ptr [rsp + 8], rsi
     f: 4889542410                     mov qword ptr [rsp + 0x10], rdx
    14: 488b3424                       mov rsi, qword ptr [rsp]
    18: 488b7c2408                     mov rdi, qword ptr [rsp + 8]
    1d: 4c8b442410                     mov r8, qword ptr [rsp + 0x10]
    22: 41b900000000                   mov r9d, 0
.Lloop1:
    28: 4983f908                       cmp r9, 8
    2c: 0f8d5e000000                   jge .Lexit2
    32: 4c89cb                         mov rbx, r9
    35: 83c303                         add ebx, 3
    38: 4863db                         movsxd rbx, ebx
    3b: 4883fb08                       cmp rbx, 8
    3f: 400f9cc5                       setl bpl
    43: 400fb6ed                       movzx ebp, bpl
    47: c5fa100551000000               vmovss xmm0, dword ptr [rip + .LC0]
    4f: 85ed                           test ebp, ebp
    51: 0f8405000000                   je .Lmasked3
    57: c5fa10049e                     vmovss xmm0, dword ptr [rsi + rbx*4]
.Lmasked3:
    5c: c4a17a11048f                   vmovss dword ptr [rdi + r9*4], xmm0
    62: 4c89cb                         mov rbx, r9
    65: 4883e301                       and rbx, 1
    69: 4883fb00                       cmp rbx, 0
    6d: 0f94c3                         sete bl
    70: 0fb6db                         movzx ebx, bl
    73: c4a17a10048e                   vmovss xmm0, dword ptr [rsi + r9*4]
    79: 85db                           test ebx, ebx
    7b: 0f8406000000                   je .Lmasked4
    81: c4817a110488                   vmovss dword ptr [r8 + r9*4], xmm0
.Lmasked4:
    87: 4983c101                       add r9, 1
    8b: e998ffffff                     jmp .Lloop1
.Lexit2:
    90: 4883c418                       add rsp, 0x18
    94: 5d                             pop rbp
    95: 5b                             pop rbx
    96: c3                             ret
    97: cccccccccccccccccc             ; padding
.LC0:
    a0: 000000c0000000c0000000c0000000c0000000c0000000c0000000c0000000c0 ; f32 -2.0 / f64 -2.0000014305114746
