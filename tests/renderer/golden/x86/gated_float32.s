; fusegrad x86-64 kernel gated_float32
gated_float32:
     0: 53                             push rbx
     1: 55                             push rbp
     2: 4881ecb8000000                 sub rsp, 0xb8
     9: 48893c24                       mov qword ptr [rsp], rdi
     d: 4889742408                     mov qword ptr [rsp + 8], rsi
    12: 4889542410                     mov qword ptr [rsp + 0x10], rdx
    17: 488b3424                       mov rsi, qword ptr [rsp]
    1b: 488b7c2408                     mov rdi, qword ptr [rsp + 8]
    20: 4c8b442410                     mov r8, qword ptr [rsp + 0x10]
    25: 41b900000000                   mov r9d, 0
.Lloop1:
    2b: 4983f908                       cmp r9, 8
    2f: 0f8d5e000000                   jge .Lexit2
    35: 4c89cb                         mov rbx, r9
    38: 83c303                         add ebx, 3
    3b: 4863db                         movsxd rbx, ebx
    3e: 4883fb08                       cmp rbx, 8
    42: 400f9cc5                       setl bpl
    46: 400fb6ed                       movzx ebp, bpl
    4a: c5fa10054e000000               vmovss xmm0, dword ptr [rip + .LC0]
    52: 85ed                           test ebp, ebp
    54: 0f8405000000                   je .Lmasked3
    5a: c5fa10049e                     vmovss xmm0, dword ptr [rsi + rbx*4]
.Lmasked3:
    5f: c4a17a11048f                   vmovss dword ptr [rdi + r9*4], xmm0
    65: 4c89cb                         mov rbx, r9
    68: 4883e301                       and rbx, 1
    6c: 4883fb00                       cmp rbx, 0
    70: 0f94c3                         sete bl
    73: 0fb6db                         movzx ebx, bl
    76: c4a17a10048e                   vmovss xmm0, dword ptr [rsi + r9*4]
    7c: 85db                           test ebx, ebx
    7e: 0f8406000000                   je .Lmasked4
    84: c4817a110488                   vmovss dword ptr [r8 + r9*4], xmm0
.Lmasked4:
    8a: 4983c101                       add r9, 1
    8e: e998ffffff                     jmp .Lloop1
.Lexit2:
    93: c5f877                         vzeroupper
    96: 4881c4b8000000                 add rsp, 0xb8
    9d: 5d                             pop rbp
    9e: 5b                             pop rbx
    9f: c3                             ret
    a0:                                ; padding
.LC0:
    a0: 000000c0000000c0000000c0000000c0000000c0000000c0000000c0000000c0 ; f32 -2.0 / f64 -2.0000014305114746
