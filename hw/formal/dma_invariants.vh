// The invariants of dma's registers (included inside hw/rtl/dma.v under `ifdef FORMAL): the
// property monitor dma_props (hw/formal/dma.sv) watches the unit's ports, and these assertions
// tie its state to the unit's registers, so that k-induction cannot start from a state that no
// run reaches (a stall freezes both, so without them an unreachable one could last any k).

wire               f_past_valid, f_busy, f_store, f_rd_cmds, f_fence;
wire [16:0]        f_owed, f_words;
wire [SRAM_AW-1:0] f_raddr;
wire [15:0]        f_b, f_len;

dma_props #(
    .SRAM_AW (SRAM_AW)
) f_props (
    .clk (clk), .rst (rst), .stall (stall), .cmd_load (cmd_load), .cmd_store (cmd_store),
    .cmd_ext_addr (cmd_ext_addr), .cmd_sram_addr (cmd_sram_addr), .cmd_len (cmd_len),
    .done (done), .mem_addr (mem_addr), .mem_len (mem_len), .rd_cmd (rd_cmd),
    .rd_valid (rd_valid), .rd_data (rd_data), .wr_cmd (wr_cmd), .wr_push (wr_push),
    .wr_data (wr_data), .fence (fence), .fence_done (fence_done), .sram_raddr (sram_raddr),
    .sram_rdata (sram_rdata), .sram_we (sram_we), .sram_waddr (sram_waddr),
    .sram_wdata (sram_wdata),
    .f_past_valid (f_past_valid), .f_busy (f_busy), .f_store (f_store),
    .f_rd_cmds (f_rd_cmds), .f_owed (f_owed), .f_words (f_words), .f_fence (f_fence),
    .f_raddr (f_raddr), .f_b (f_b), .f_len (f_len)
);

wire [16:0]        f_b_resp = {1'b0, f_b} + {1'b0, resp_reg};

always @(*) begin
    if (f_past_valid) begin
        // the state register holds one of the five states
        I_STATE: assert (state_reg <= S_FENCE);
        // a transfer runs exactly while the unit is out of IDLE, in its direction's states
        I_BUSY: assert (f_busy == (state_reg != S_IDLE));
        I_DIRECTION: assert (!f_busy || f_store == (state_reg == S_STORE
                                                    || state_reg == S_FENCE));
        // the words counted are the unit's, and fewer than len until its end
        I_WORDS: assert (!f_busy || f_words == {1'b0, resp_reg});
        I_WORDS_DUE: assert (!f_busy || state_reg == S_FENCE || resp_reg < f_len);
        // LOAD: before the read stream nothing owed nor written; after it, owed + written = len
        I_LOAD_CMD: assert (state_reg != S_LOAD_CMD || (!f_rd_cmds && f_owed == 17'd0
                                                        && resp_reg == 16'd0));
        I_LOAD: assert (state_reg != S_LOAD || (f_rd_cmds
                                                && f_owed + f_words == {1'b0, f_len}));
        // nothing owed outside a LOAD (no read stream is commanded by a STORE)
        I_NOT_OWED: assert (state_reg == S_LOAD || f_owed == 17'd0);
        // STORE: a read issued and not pushed is pending (one at most), never past len, and
        // the SRAM address it was presented at is the next word's, held through stalls
        I_PENDING: assert (!pend_reg || state_reg == S_STORE);
        I_ISSUED: assert (state_reg != S_STORE || (issue_reg <= f_len
                                                   && issue_reg == resp_reg + {15'd0, pend_reg}));
        I_READ_ADDR: assert (!pend_reg || raddr_reg == f_b_resp[SRAM_AW-1:0]);
        I_RADDR: assert (raddr_reg == f_raddr);
        // FENCE: every word pushed and the fence asked for; no fence owed anywhere else
        I_FENCE: assert (f_fence == (state_reg == S_FENCE));
        I_FENCED: assert (state_reg != S_FENCE || (resp_reg == f_len && issue_reg == f_len));
    end
end
